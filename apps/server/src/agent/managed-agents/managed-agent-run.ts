// One run of a managed agent, however it was reached (its runs route, an agent message, A2A):
// the grant it runs under, its owner's tool policy, the stored run record and the model usage.

import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { contactRunGrant } from "../../people/messaging/contact-grant";
import { displayName } from "../../people/messaging/shared-conversations";
import type { PersonRow } from "../../people/network/network-people";
import { boundByLink, type UsablePermission } from "../../people/share/link-bound";
import { agentInstructions, FROM_ANOTHER_AGENT } from "../prompt/instructions";
import { newBlockNonce, renderBlock } from "../prompt/untrusted-blocks";
import { type AgentEvent, type AgentRunResult, runAgent } from "../runner/agent-runner";
import type { AnyAgentTool } from "../tools/agent-tool";
import { NATIVE_TOOLS } from "../tools/registry";
import type { RunGrant } from "../tools/run-grant";
import type { ToolDecisionLookup } from "../tools/tool-decision";
import { startRun } from "../usage/meters";
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
}

function runStatus(result: AgentRunResult): RunRow["status"] {
  if (result.status === "completed") return "completed";
  return result.status === "cancelled" ? "stopped" : "failed";
}

/** Runs the agent once under `request.grant` and its owner's tool policy, and records the run and its tokens. */
export async function runManagedAgent(app: AppContext, agent: AgentRow, request: ManagedRunRequest): Promise<ManagedRunOutcome> {
  const model = app.models.resolve(agent.model);
  const ownerId = Number(agent.owner_id);
  const owner = await app.db.selectFrom("users").select(["id", "username", "name"]).where("id", "=", ownerId).executeTakeFirstOrThrow();
  const ownerName = displayName({ id: ownerId, username: owner.username, name: owner.name });
  // Counted against the owner's budgets (the account's, the key's, this agent's) before the model is
  // called; a budget used up refuses the run (402 budget_exceeded) before it is recorded.
  const meter = await startRun(
    app,
    { userId: ownerId, apiKeyId: request.apiKeyId, agentId: String(agent.id) },
    { source: MANAGED_AGENT_USAGE, model },
  );
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

  const nonce = newBlockNonce();
  const askedBy = request.asker ? `${displayName(request.asker)}'s agent` : undefined;
  const instructions = [
    agentInstructions({ ownerName, askedBy, timezone: "UTC", now: app.clock.now(), blockNonce: nonce }),
    `You are ${agent.name} (handle ${agent.handle}), an agent ${ownerName} set up; you act only within the tools you are given.`,
    agent.instructions.trim() ? `${ownerName}'s instructions for you:\n${agent.instructions.trim()}` : "",
    request.asker ? FROM_ANOTHER_AGENT : "",
  ]
    .filter(Boolean)
    .join("\n");
  let result: AgentRunResult;
  try {
    result = await runAgent({
      app,
      model,
      grant: request.grant,
      timezone: "UTC",
      instructions,
      blockNonce: nonce,
      messages: [
        {
          role: "user",
          content: renderBlock(nonce, {
            source: "managed-agent-input",
            attributes: { from: request.asker?.username ?? "owner" },
            text: request.input,
          }),
        },
      ],
      signal: request.signal,
      onEvent: request.onEvent ?? (() => {}),
      wrapTool: request.wrapTool,
      toolDecision: toolDecisionOf(agent),
      onStep: meter.onStep,
    });
  } catch (error) {
    await finish(app, runId, { status: "failed", output: "", toolsUsed: [], prompt: 0, completion: 0, error: "the run failed" });
    throw error;
  }
  const run = await finish(app, runId, {
    status: runStatus(result),
    output: result.text,
    toolsUsed: result.toolsUsed,
    prompt: result.usage.promptTokens,
    completion: result.usage.completionTokens,
    error: result.error ?? null,
  });
  return { run, result, modelId: model.modelId, modelAlias: model.alias };
}

async function finish(
  app: AppContext,
  runId: number,
  end: { status: RunRow["status"]; output: string; toolsUsed: string[]; prompt: number; completion: number; error: string | null },
): Promise<RunRow> {
  const updated = await app.db
    .updateTable("managed_agent_runs")
    .set({
      status: end.status,
      output: end.output,
      tools_used: JSON.stringify(end.toolsUsed),
      prompt_tokens: Math.max(0, Math.round(end.prompt)),
      completion_tokens: Math.max(0, Math.round(end.completion)),
      error: end.error,
      finished_at: app.clock.iso(),
    })
    .where("id", "=", runId)
    // A run another part paused (requires_action) is that part's to finish.
    .where("status", "=", "running")
    .returningAll()
    .executeTakeFirst();
  return updated ?? app.db.selectFrom("managed_agent_runs").selectAll().where("id", "=", runId).executeTakeFirstOrThrow();
}
