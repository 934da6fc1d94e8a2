/**
 * What a run's owner decided for one tool: `allow` runs it, `deny` removes it from the run's
 * toolset (the model never sees it), `ask` pauses the run for the owner's decision (an escalation).
 * A tool the policy does not name is `allow`ed: the grant already limits what exists at all.
 */
export type ToolDecision = "allow" | "ask" | "deny";

/** The decision for a tool, by its name as the model sees it. */
export type ToolDecisionLookup = (toolName: string) => ToolDecision;

/**
 * The tools a policy leaves in a run. Until a run can pause for the owner, `ask` fails closed:
 * the tool is removed like a `deny`.
 */
export function toolsAllowedBy<T extends { readonly name: string }>(tools: readonly T[], decide: ToolDecisionLookup | undefined): T[] {
  if (!decide) return [...tools];
  return tools.filter((tool) => decide(tool.name) === "allow");
}
