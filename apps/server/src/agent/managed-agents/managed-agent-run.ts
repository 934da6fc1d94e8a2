// One run of a managed agent, however it was reached (its runs route, an agent message, A2A):
// the grant it runs under, its owner's tool policy, the stored run record and the model usage;
// and its pause for the owner's decision on a tool its policy says `ask` for (an escalation source).

import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { contactRunGrant } from "../../people/messaging/contact-grant";
import { displayName, findPerson } from "../../people/messaging/shared-conversations";
import type { PersonRow } from "../../people/network/network-people";
import { boundByLink, type UsablePermission, usableContactPermission, whileLinkLive } from "../../people/share/link-bound";
import { type EscalationSource, pauseRun } from "../escalations/escalations";
import { agentInstructions, FROM_ANOTHER_AGENT } from "../prompt/instructions";
import { newBlockNonce, renderBlock } from "../prompt/untrusted-blocks";
import { type AgentEvent, type AgentRunRequest, type AgentRunResult, runAgent } from "../runner/agent-runner";
import type { AnyAgentTool } from "../tools/agent-tool";
import { NATIVE_TOOLS } from "../tools/registry";
import type { RunGrant } from "../tools/run-grant";
import type { ToolDecisionLookup } from "../tools/tool-decision";
import { meterRun, startRun } from "../usage/meters";
import { type AgentRow, grantOf, namespacesOf, type RunRow, toolPolicyOf } from "./managed-agent-store";

export type RunSource = "runs" | "agent_message" | "a2a";

/** The purpose its model calls are recorded under (metering counts it). */
export const MANAGED_AGENT_USAGE = "managed_agent";

/**
 * The agent's own grant as a run grant: what its owner configured, as a contact's permission is
 * read (the owner's own folders only, each with its subfolders, never Memory nor the root; todos
 * read and create, never complete), limited to the tools of its namespaces. `caller` says who asks.
 */
export async function agentGrant(db: Kysely<Schema>, agent: AgentRow, caller: RunGrant["caller"]): Promise<RunGrant> {
  const grant = grantOf(agent);
  const { notesAccess, todoAccess } = grant;
  const todos = todoAccess.create ? "create" : todoAccess.read ? "read" : "none";
  const ownerId = Number(agent.owner_id);
  const base = await contactRunGrant(
    db,
    ownerId,
    { userId: ownerId, label: agent.handle },
    {
      notesAccess: { scope: notesAccess.scope, folderIds: notesAccess.folderIds, access: notesAccess.access },
      todosAccess: { access: todos },
    },
  );
  const scopes = new Set(base.scopes);
  // "create" alone does not read: a contact's create includes read, the agent's grant says both.
  if (!todoAccess.read) scopes.delete("os.todos:read");
  const namespaces = new Set(namespacesOf(agent));
  const inNamespaces = new Set(NATIVE_TOOLS.filter((tool) => namespaces.has(tool.namespace)).map((tool) => tool.name));
  const tools = new Set([...(base.tools ?? [])].filter((name) => inNamespaces.has(name)));
  return { ...base, caller, scopes, tools };
}

/**
 * What a run for another person's agent may reach: the agent's grant intersected with what its
 * owner granted that person (scopes, folders and tools each the intersection; a permission born
 * of a share link also bound by the link).
 */
export async function intersectedGrant(
  app: AppContext,
  agent: AgentRow,
  asker: PersonRow,
  permission: UsablePermission,
): Promise<RunGrant> {
  const ownerId = Number(agent.owner_id);
  const contact = await contactRunGrant(app.db, ownerId, { userId: asker.id, label: asker.username }, permission.permissions);
  const granted = permission.link ? await boundByLink(app, permission.link, contact) : contact;
  const own = await agentGrant(app.db, agent, granted.caller);
  const within = <T>(a: ReadonlySet<T> | "all" | undefined, b: ReadonlySet<T> | "all" | undefined): Set<T> | "all" | undefined => {
    if (a === undefined || a === "all") return b === undefined || b === "all" ? a : new Set(b);
    if (b === undefined || b === "all") return new Set(a);
    return new Set([...a].filter((x) => b.has(x)));
  };
  return {
    ownerId,
    caller: granted.caller,
    scopes: within(own.scopes, granted.scopes) as Set<never>,
    folders: within(own.folders, granted.folders) ?? new Set(),
    rootNotes: false,
    tools: within(own.tools, granted.tools) as Set<string> | undefined,
  };
}

/** The owner's per-tool decisions; a tool the policy does not name is allowed (the grant already limits). */
export function toolDecisionOf(agent: AgentRow): ToolDecisionLookup {
  const policy = toolPolicyOf(agent);
  return (name) => (Object.hasOwn(policy, name) ? (policy[name] as "allow" | "ask" | "deny") : "allow");
}

export interface ManagedRunRequest {
  readonly source: RunSource;
  /** The person whose agent asks; null for the owner or the agent's own key. */
  readonly asker: PersonRow | null;
  readonly apiKeyId: string | null;
  readonly grant: RunGrant;
  readonly input: string;
  readonly signal: AbortSignal;
  readonly onEvent?: (event: AgentEvent) => void;
  /** Called once the run's record exists, before the model is asked. */
  readonly onStart?: (runId: number) => void;
  readonly wrapTool?: (tool: AnyAgentTool) => AnyAgentTool;
}

export interface ManagedRunOutcome {
  readonly run: RunRow;
  readonly result: AgentRunResult;
  readonly modelId: string;
  readonly modelAlias: string;
  /** When the run paused on a tool its policy says `ask` for: the owner's escalations. */
  readonly escalationIds?: readonly string[];
}

/** Who a managed agent's model calls are counted against: its owner's account, the key that asked, the agent. */
const meterSubject = (agent: AgentRow, apiKeyId: string | null) => ({
  userId: Number(agent.owner_id),
  apiKeyId,
  agentId: String(agent.id),
});

/**
 * The run's request but its messages: the agent's model, instructions, grant, tool policy and
 * meter. The first run and a resumed one (managed-agent-escalations.ts) build it alike.
 */
export async function managedRunRequest(
  app: AppContext,
  agent: AgentRow,
  parts: { asker: PersonRow | null; apiKeyId: string | null; grant: RunGrant; wrapTool?: (tool: AnyAgentTool) => AnyAgentTool },
): Promise<Omit<AgentRunRequest, "messages" | "signal" | "canPause" | "guardCall">> {
  const model = app.models.resolve(agent.model);
  const ownerId = Number(agent.owner_id);
  const owner = await app.db.selectFrom("users").select(["id", "username", "name"]).where("id", "=", ownerId).executeTakeFirstOrThrow();
  const ownerName = displayName({ id: ownerId, username: owner.username, name: owner.name });
  const nonce = newBlockNonce();
  const askedBy = parts.asker ? `${displayName(parts.asker)}'s agent` : undefined;
  const instructions = [
    agentInstructions({ ownerName, askedBy, timezone: "UTC", now: app.clock.now(), blockNonce: nonce }),
    `You are ${agent.name} (handle ${agent.handle}), an agent ${ownerName} set up; you act only within the tools you are given.`,
    agent.instructions.trim() ? `${ownerName}'s instructions for you:\n${agent.instructions.trim()}` : "",
    parts.asker ? FROM_ANOTHER_AGENT : "",
  ]
    .filter(Boolean)
    .join("\n");
  return {
    app,
    model,
    grant: parts.grant,
    timezone: "UTC",
    instructions,
    blockNonce: nonce,
    onEvent: () => {},
    wrapTool: parts.wrapTool,
    toolDecision: toolDecisionOf(agent),
    // Each step recorded against the owner's budgets (the account's, the key's, this agent's).
    onStep: meterRun(app, meterSubject(agent, parts.apiKeyId), { source: MANAGED_AGENT_USAGE, model }).onStep,
  };
}

/** Runs the agent once under `request.grant` and its owner's tool policy, and records the run and its tokens. */
export async function runManagedAgent(app: AppContext, agent: AgentRow, request: ManagedRunRequest): Promise<ManagedRunOutcome> {
  const base = await managedRunRequest(app, agent, {
    asker: request.asker,
    apiKeyId: request.apiKeyId,
    grant: request.grant,
    wrapTool: request.wrapTool,
  });
  const { model } = base;
  const ownerId = Number(agent.owner_id);
  // Counted against the owner's budgets (the account's, the key's, this agent's) before the model is
  // called; a budget used up refuses the run (402 budget_exceeded) before it is recorded.
  await startRun(app, meterSubject(agent, request.apiKeyId), { source: MANAGED_AGENT_USAGE, model });
  const inserted = await app.db
    .insertInto("managed_agent_runs")
    .values({
      agent_id: Number(agent.id),
      owner_id: ownerId,
      source: request.source,
      caller_user_id: request.asker?.id ?? null,
      api_key_id: request.apiKeyId,
      status: "running",
      input: request.input,
      output: "",
      tools_used: "[]",
      prompt_tokens: 0,
      completion_tokens: 0,
      error: null,
      model: model.modelId,
      created_at: app.clock.iso(),
      finished_at: null,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  const runId = Number(inserted.id);
  request.onStart?.(runId);

  let result: AgentRunResult;
  try {
    result = await runAgent({
      ...base,
      messages: [
        {
          role: "user",
          content: renderBlock(base.blockNonce, {
            source: "managed-agent-input",
            attributes: { from: request.asker?.username ?? "owner" },
            text: request.input,
          }),
        },
      ],
      signal: request.signal,
      onEvent: request.onEvent ?? (() => {}),
      // A tool the policy says `ask` for pauses the run for the owner (an escalation).
      canPause: true,
    });
  } catch (error) {
    await endRun(app, runId, null, false, "the run failed");
    throw error;
  }
  let escalationIds: string[] | undefined;
  if (result.status === "requires_action") {
    const context: ManagedRunContext = { agentId: Number(agent.id), runId, askerId: request.asker?.id ?? null, apiKeyId: request.apiKeyId };
    const paused = await pauseRun(app, { ownerId, source: managedAgentEscalations, sourceId: String(agent.id), context, result });
    escalationIds = paused.escalations.map((escalation) => escalation.id);
  }
  const run = await endRun(app, runId, result, result.status === "requires_action");
  return { run, result, modelId: model.modelId, modelAlias: model.alias, ...(escalationIds ? { escalationIds } : {}) };
}

function runStatus(result: AgentRunResult): RunRow["status"] {
  if (result.status === "completed") return "completed";
  return result.status === "cancelled" ? "stopped" : "failed";
}

/**
 * Writes a part of a run into its record: the tools it called and its tokens added to what the
 * record holds (a resumed run's parts add up). `paused`: it waits for the owner (`requires_action`);
 * otherwise it ends with the result's status. `result` null: it is closed as failed (`error`).
 */
export async function endRun(
  app: AppContext,
  runId: number,
  result: AgentRunResult | null,
  paused: boolean,
  error = "The server stopped during the resumed run.",
): Promise<RunRow> {
  const row = await app.db.selectFrom("managed_agent_runs").selectAll().where("id", "=", runId).executeTakeFirstOrThrow();
  if (row.status !== "running" && row.status !== "requires_action") return row;
  const toolsBefore = JSON.parse(row.tools_used) as string[];
  const updated = await app.db
    .updateTable("managed_agent_runs")
    .set(
      result === null
        ? { status: "failed", error, finished_at: app.clock.iso() }
        : {
            status: paused ? "requires_action" : runStatus(result),
            output: paused ? row.output : result.text,
            tools_used: JSON.stringify([...toolsBefore, ...result.toolsUsed]),
            prompt_tokens: Number(row.prompt_tokens) + Math.max(0, Math.round(result.usage.promptTokens)),
            completion_tokens: Number(row.completion_tokens) + Math.max(0, Math.round(result.usage.completionTokens)),
            error: paused ? null : (result.error ?? null),
            finished_at: paused ? null : app.clock.iso(),
          },
    )
    .where("id", "=", runId)
    // Another part may have ended it meanwhile (a stopped caller, the sweep): the first end stands.
    .where("status", "=", row.status)
    .returningAll()
    .executeTakeFirst();
  return updated ?? app.db.selectFrom("managed_agent_runs").selectAll().where("id", "=", runId).executeTakeFirstOrThrow();
}

// ---- Managed agents as a source of escalations (docs/escalations.md) ----
// A tool the agent's policy says `ask` for pauses its run (`requires_action`); once the owner decides,
// the run resumes on any instance under the agent's grant and policy as they stand then, and its
// record is finished.

/** What a paused run needs to be rebuilt on any instance; JSON, and never a secret. */
export interface ManagedRunContext {
  readonly agentId: number;
  /** The run's record (`managed_agent_runs.id`). */
  readonly runId: number;
  /** The person whose agent asked; null for the owner or the agent's own key. */
  readonly askerId: number | null;
  /** The owner's (or the agent's) key that asked, for usage; never another person's. */
  readonly apiKeyId: string | null;
}

async function agentOf(app: AppContext, context: ManagedRunContext): Promise<AgentRow> {
  const agent = await app.db.selectFrom("managed_agents").selectAll().where("id", "=", context.agentId).executeTakeFirst();
  if (!agent) throw new Error("the agent of the paused run is gone");
  return agent;
}

export const managedAgentEscalations: EscalationSource<ManagedRunContext> = {
  type: "managed_agent",
  async prepare(app, context) {
    const agent = await agentOf(app, context);
    // Paused meanwhile: nothing runs (the run is closed as failed, below).
    if (agent.status !== "active") throw new Error("the agent was paused");
    if (context.askerId === null) {
      const grant = await agentGrant(app.db, agent, { kind: "owner", apiKeyId: context.apiKeyId });
      return managedRunRequest(app, agent, { asker: null, apiKeyId: context.apiKeyId, grant });
    }
    const asker = await findPerson(app.db, String(context.askerId));
    const permission = asker ? await usableContactPermission(app, Number(agent.owner_id), asker.id) : null;
    if (!asker || !permission) throw new Error("the permission the paused run asked under is gone");
    const grant = await intersectedGrant(app, agent, asker, permission);
    const { link } = permission;
    return managedRunRequest(app, agent, {
      asker,
      apiKeyId: context.apiKeyId,
      grant,
      wrapTool: link ? whileLinkLive(app, Number(link.id)) : undefined,
    });
  },
  async finish(app, context, result, paused) {
    // Its steps were metered as they ran (the request's onStep); the record adds this part's tools and tokens.
    await endRun(app, context.runId, result, paused !== null);
  },
  async abandon(app, context) {
    await endRun(app, context.runId, null, false);
  },
  async describe(app, context) {
    const agent = await agentOf(app, context);
    if (context.askerId === null) return `Your agent ${agent.handle}`;
    const asker = await findPerson(app.db, String(context.askerId));
    return `Your agent ${agent.handle}, asked by ${asker?.username ?? "a contact"}'s agent`;
  },
};
