/**
 * What a run's owner decided for one tool: `allow` runs it, `deny` removes it from the run's
 * toolset (the model never sees it), `ask` pauses the run for the owner's decision (an escalation).
 * A tool the policy does not name is `allow`ed: the grant already limits what exists at all.
 */
export type ToolDecision = "allow" | "ask" | "deny";

/** The decision for a tool, by its name as the model sees it. */
export type ToolDecisionLookup = (toolName: string) => ToolDecision;

/** A decision lookup over a stored policy (`{tool: decision}`); unnamed tools are allowed. */
export function decisionsFrom(policy: Readonly<Record<string, ToolDecision>> | null | undefined): ToolDecisionLookup | undefined {
  if (!policy || Object.keys(policy).length === 0) return undefined;
  return (name) => (Object.hasOwn(policy, name) ? (policy[name] as ToolDecision) : "allow");
}

/**
 * The tools a policy leaves in a run. `ask` tools stay when the run can pause for the owner
 * (`canPause`: the caller stores paused runs as escalations); otherwise `ask` fails closed and the
 * tool is removed like a `deny`.
 */
export function toolsAllowedBy<T extends { readonly name: string }>(
  tools: readonly T[],
  decide: ToolDecisionLookup | undefined,
  canPause = false,
): T[] {
  if (!decide) return [...tools];
  return tools.filter((tool) => {
    const decision = decide(tool.name);
    return decision === "allow" || (decision === "ask" && canPause);
  });
}
