// Managed agents' records: the handle rules, reading one as its owner (another's is 404) and the
// views the routes answer. Handles and usernames share one space: each side refuses the other's.

import { MANAGED_AGENT_HANDLE, type ManagedAgentGrant, RESERVED_AGENT_HANDLES, usernameProblem } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { parseAgentGrant } from "../../auth/agent-key-scopes";
import type { ManagedAgentRunsTable, ManagedAgentsTable, Schema } from "../../db/schema";
import { agentPaused, badRequest, conflict, notFound } from "../../http/errors";
import type { ToolDecision } from "../tools/tool-decision";

export type AgentRow = Selectable<ManagedAgentsTable>;
export type RunRow = Selectable<ManagedAgentRunsTable>;

/** Agents one user may have. */
export const MAX_AGENTS_PER_USER = 50;
/** Unrevoked keys one agent may have. */
export const MAX_KEYS_PER_AGENT = 20;

/** Refuses a handle that breaks the pattern, is reserved, or is (or addresses) a person. */
export async function checkHandle(db: Kysely<Schema>, handle: string): Promise<void> {
  if (!MANAGED_AGENT_HANDLE.test(handle) || usernameProblem(handle) !== null) {
    throw badRequest("invalid_handle", "handle: 2 to 32 lowercase letters, digits or '-', starting with a letter");
  }
  if (RESERVED_AGENT_HANDLES.has(handle)) throw badRequest("reserved_handle", `handle "${handle}" is reserved`);
  const person = await db.selectFrom("users").select("id").where("username", "=", handle).executeTakeFirst();
  const agent = await db.selectFrom("managed_agents").select("id").where("handle", "=", handle).executeTakeFirst();
  if (person || agent) throw conflict("handle_taken", `handle "${handle}" is already taken`);
}

/** Whether a username would collide with an agent's handle (users-service refuses it). */
export async function isAgentHandle(db: Kysely<Schema>, name: string): Promise<boolean> {
  return (await db.selectFrom("managed_agents").select("id").where("handle", "=", name).executeTakeFirst()) !== undefined;
}

/** The owner's agent; another owner's (or none) is a 404 exactly alike. */
export async function ownedAgent(db: Kysely<Schema>, ownerId: number, id: number): Promise<AgentRow> {
  const row = await db.selectFrom("managed_agents").selectAll().where("id", "=", id).where("owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound("managed agent");
  return row;
}

/** The agent a handle names, whoever owns it. */
export async function agentByHandle(db: Kysely<Schema>, handle: string): Promise<AgentRow | undefined> {
  if (!MANAGED_AGENT_HANDLE.test(handle)) return undefined;
  return db.selectFrom("managed_agents").selectAll().where("handle", "=", handle).executeTakeFirst();
}

export function assertActive(row: AgentRow): void {
  if (row.status !== "active") throw agentPaused(row.handle);
}

function parseJson<T>(text: string, fallback: T): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export function grantOf(row: AgentRow): ManagedAgentGrant {
  return parseAgentGrant(row.agent_grant);
}

export function namespacesOf(row: AgentRow): string[] {
  const parsed = parseJson<unknown>(row.namespaces, []);
  return Array.isArray(parsed) ? parsed.filter((n): n is string => typeof n === "string") : [];
}

export function toolPolicyOf(row: AgentRow): Record<string, ToolDecision> {
  const parsed = parseJson<unknown>(row.tool_policy, {});
  const policy: Record<string, ToolDecision> = {};
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
    for (const [name, decision] of Object.entries(parsed)) {
      // An unreadable decision fails closed: the tool is denied.
      policy[name] = decision === "allow" || decision === "ask" ? decision : "deny";
    }
  }
  return policy;
}

export function agentView(row: AgentRow) {
  return {
    id: Number(row.id),
    handle: row.handle,
    name: row.name,
    description: row.description,
    instructions: row.instructions,
    model: row.model,
    namespaces: namespacesOf(row),
    grant: grantOf(row),
    toolPolicy: toolPolicyOf(row),
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function runView(row: RunRow) {
  const tools = parseJson<unknown>(row.tools_used, []);
  return {
    id: Number(row.id),
    agentId: Number(row.agent_id),
    source: row.source as "runs" | "agent_message" | "a2a",
    callerUserId: row.caller_user_id === null ? null : Number(row.caller_user_id),
    status: row.status,
    input: row.input,
    output: row.output,
    toolsUsed: Array.isArray(tools) ? tools.map(String) : [],
    usage: {
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      totalTokens: row.prompt_tokens + row.completion_tokens,
    },
    model: row.model,
    error: row.error,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}

/** Past the run time limit, a run still `running` has no instance left working on it. */
const ABANDONED_RUN_MARGIN_MS = 60_000;

/**
 * The maintenance task (every instance; a conditional UPDATE, so each run is closed once): closes
 * as failed the runs an instance stopped in the middle of (`kill -9`, a crash). A live run cannot
 * be `running` past the runner's time limit; a resumed run waits as `requires_action` instead.
 */
export async function closeAbandonedRuns(db: Kysely<Schema>, now: Date, runTimeoutMs: number): Promise<void> {
  const before = new Date(now.getTime() - runTimeoutMs - ABANDONED_RUN_MARGIN_MS).toISOString();
  await db
    .updateTable("managed_agent_runs")
    .set({ status: "failed", error: "the server stopped during the run", finished_at: now.toISOString() })
    .where("status", "=", "running")
    .where("created_at", "<", before)
    .execute();
}
