// The managed-agents routes (docs/managed-agents.md). The owner manages; an agent's own key
// reaches only itself: it may read itself and its runs and run itself, never create keys or
// agents nor change itself (403), and any other agent is a 404 to it.

import type { ManagedAgentGrant } from "@tandem/core";
import type { Request, Response } from "express";
import { createApiKey, revokeApiKey } from "../../auth/api-keys";
import { agentOf, type UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { ApiError, conflict, forbidden, notFound } from "../../http/errors";
import { created } from "../../http/reply";
import { HANDLED, type RouteHandlers } from "../../http/router";
import { bumpAccessEpoch } from "../../sync/access-epoch";
import { listFolders } from "../../workspace/folders/folders-service";
import { clientGoneSignal, withChatRunSlot } from "../chat/chat-routes";
import { ChatStream } from "../chat/chat-stream";
import { agentGrant, runManagedAgent } from "./managed-agent-run";
import {
  type AgentRow,
  agentView,
  assertActive,
  checkHandle,
  closeAbandonedRuns,
  MAX_AGENTS_PER_USER,
  MAX_KEYS_PER_AGENT,
  ownedAgent,
  runView,
} from "./managed-agent-store";

type ManagedAgentRouteId =
  | "createManagedAgent"
  | "listManagedAgents"
  | "getManagedAgent"
  | "updateManagedAgent"
  | "deleteManagedAgent"
  | "createManagedAgentKey"
  | "listManagedAgentKeys"
  | "revokeManagedAgentKey"
  | "runManagedAgent"
  | "listManagedAgentRuns";

const DEFAULT_NAMESPACES = ["notes", "todos"];
const NO_GRANT: ManagedAgentGrant = {
  notesAccess: { scope: "none", folderIds: [], access: "read" },
  todoAccess: { read: false, create: false },
};

/** The owner's routes: an agent's key is refused (it can never make keys or agents, nor change its grant). */
function ownerOnly(principal: UserPrincipal): void {
  if (agentOf(principal)) throw forbidden("agent_not_allowed", "A managed agent cannot manage agents or keys, nor change itself");
}

/** The agent the caller may see: the owner's own, or, for an agent's key, only itself. */
async function reachableAgent(app: AppContext, principal: UserPrincipal, id: number): Promise<AgentRow> {
  const self = agentOf(principal);
  if (self && self.id !== id) throw notFound("managed agent");
  return ownedAgent(app.db, principal.userId, id);
}

/** The folders a grant names must be the owner's own (not shared with them); another's is a 404. */
async function checkGrant(app: AppContext, ownerId: number, grant: ManagedAgentGrant): Promise<void> {
  if (grant.notesAccess.scope !== "folders") return;
  const own = new Set((await listFolders(app.db, ownerId)).filter((folder) => !folder.shared).map((folder) => folder.id));
  for (const id of grant.notesAccess.folderIds) if (!own.has(id)) throw notFound(`folder ${id}`);
}

function keyView(row: { id: string; label: string | null; created_at: string; last_used_at: string | null; revoked_at: string | null }) {
  return { keyId: row.id, label: row.label, createdAt: row.created_at, lastUsedAt: row.last_used_at, revokedAt: row.revoked_at };
}

async function newAgentKey(app: AppContext, agent: AgentRow, label: string | null) {
  const made = await createApiKey(app.db, { userId: Number(agent.owner_id), scopes: [], label, agentId: Number(agent.id) });
  return {
    key: { keyId: made.keyId, label: made.label, createdAt: made.createdAt, lastUsedAt: null, revokedAt: null },
    apiKey: made.apiKey,
  };
}

export function managedAgentHandlers(app: AppContext): RouteHandlers<ManagedAgentRouteId> {
  const { db, clock } = app;
  app.maintenance.add("managed-agents.abandoned-runs", () => closeAbandonedRuns(db, clock.now(), app.config.agentTimeoutMs));

  return {
    createManagedAgent: async ({ input, principal }) => {
      ownerOnly(principal);
      const body = input.body;
      const { count } = await db
        .selectFrom("managed_agents")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("owner_id", "=", principal.userId)
        .executeTakeFirstOrThrow();
      if (Number(count) >= MAX_AGENTS_PER_USER) {
        throw conflict("too_many_agents", `you have ${MAX_AGENTS_PER_USER} managed agents already; delete one first`);
      }
      await checkHandle(db, body.handle);
      const model = body.model ?? "default";
      // An unknown model is a 400 now, not a failure at its first run.
      app.models.resolve(model);
      const grant = body.grant ?? NO_GRANT;
      await checkGrant(app, principal.userId, grant);
      const now = clock.iso();
      const row = await db
        .insertInto("managed_agents")
        .values({
          owner_id: principal.userId,
          handle: body.handle,
          name: body.name ?? body.handle,
          description: body.description ?? "",
          instructions: body.instructions ?? "",
          model,
          namespaces: JSON.stringify([...new Set(body.namespaces ?? DEFAULT_NAMESPACES)]),
          agent_grant: JSON.stringify(grant),
          tool_policy: JSON.stringify(body.toolPolicy ?? {}),
          status: "active",
          created_at: now,
          updated_at: now,
        })
        // Two creations of one handle at once: one wins, the other is told as if it came second.
        .onConflict((oc) => oc.column("handle").doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) throw conflict("handle_taken", `handle "${body.handle}" is already taken`);
      const key = await newAgentKey(app, row, "first key");
      return created({ success: true, agent: agentView(row), ...key });
    },

    listManagedAgents: async ({ principal }) => {
      const self = agentOf(principal);
      let query = db.selectFrom("managed_agents").selectAll().where("owner_id", "=", principal.userId);
      if (self) query = query.where("id", "=", self.id);
      const rows = await query.orderBy("created_at").orderBy("id").execute();
      return { success: true, agents: rows.map(agentView) };
    },

    getManagedAgent: async ({ input, principal }) => ({
      success: true,
      agent: agentView(await reachableAgent(app, principal, input.params.id)),
    }),

    updateManagedAgent: async ({ input, principal }) => {
      ownerOnly(principal);
      const row = await ownedAgent(db, principal.userId, input.params.id);
      const body = input.body;
      if (body.model !== undefined) app.models.resolve(body.model);
      if (body.grant !== undefined) await checkGrant(app, principal.userId, body.grant);
      const updated = await db
        .updateTable("managed_agents")
        .set({
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.description !== undefined ? { description: body.description } : {}),
          ...(body.instructions !== undefined ? { instructions: body.instructions } : {}),
          ...(body.model !== undefined ? { model: body.model } : {}),
          ...(body.namespaces !== undefined ? { namespaces: JSON.stringify([...new Set(body.namespaces)]) } : {}),
          ...(body.grant !== undefined ? { agent_grant: JSON.stringify(body.grant) } : {}),
          ...(body.toolPolicy !== undefined ? { tool_policy: JSON.stringify(body.toolPolicy) } : {}),
          ...(body.status !== undefined ? { status: body.status } : {}),
          updated_at: clock.iso(),
        })
        .where("id", "=", row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { success: true, agent: agentView(updated) };
    },

    deleteManagedAgent: async ({ input, principal }) => {
      ownerOnly(principal);
      const row = await ownedAgent(db, principal.userId, input.params.id);
      await db.transaction().execute(async (tx) => {
        // Its keys go with it (cascade); the epoch closes anything still open with one.
        await tx.deleteFrom("managed_agents").where("id", "=", row.id).execute();
        await bumpAccessEpoch(tx);
      });
      return { success: true };
    },

    createManagedAgentKey: async ({ input, principal }) => {
      ownerOnly(principal);
      const row = await ownedAgent(db, principal.userId, input.params.id);
      const { count } = await db
        .selectFrom("api_keys")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("agent_id", "=", Number(row.id))
        .where("revoked_at", "is", null)
        .executeTakeFirstOrThrow();
      if (Number(count) >= MAX_KEYS_PER_AGENT) {
        throw conflict("too_many_keys", `the agent has ${MAX_KEYS_PER_AGENT} keys already; revoke one first`);
      }
      return created({ success: true, ...(await newAgentKey(app, row, input.body.label ?? null)) });
    },

    listManagedAgentKeys: async ({ input, principal }) => {
      ownerOnly(principal);
      const row = await ownedAgent(db, principal.userId, input.params.id);
      const keys = await db
        .selectFrom("api_keys")
        .select(["id", "label", "created_at", "last_used_at", "revoked_at"])
        .where("agent_id", "=", Number(row.id))
        .orderBy("created_at", "desc")
        .orderBy("id")
        .execute();
      return { success: true, keys: keys.map(keyView) };
    },

    revokeManagedAgentKey: async ({ input, principal }) => {
      ownerOnly(principal);
      const row = await ownedAgent(db, principal.userId, input.params.id);
      const key = await db
        .selectFrom("api_keys")
        .select("id")
        .where("id", "=", input.params.keyId)
        .where("agent_id", "=", Number(row.id))
        .executeTakeFirst();
      if (!key) throw notFound("key");
      await revokeApiKey(db, key.id);
      const after = await db
        .selectFrom("api_keys")
        .select(["id", "label", "created_at", "last_used_at", "revoked_at"])
        .where("id", "=", key.id)
        .executeTakeFirstOrThrow();
      return { success: true, key: keyView(after) };
    },

    runManagedAgent: async ({ input, principal, req, res }) => {
      const row = await reachableAgent(app, principal, input.params.id);
      assertActive(row);
      const grant = await agentGrant(db, row, { kind: "owner", apiKeyId: principal.credential.id });
      const request = {
        source: "runs" as const,
        asker: null,
        apiKeyId: principal.credential.kind === "api_key" ? principal.credential.id : null,
        grant,
        input: input.body.input,
      };
      // Counted with the owner's other runs (chat, MCP), over every instance.
      return withChatRunSlot(app, principal.userId, async () => {
        if (input.body.stream) {
          await streamRun(app, row, request, req, res);
          return HANDLED;
        }
        // A failed run is recorded and answered as such (its status and error), not as a 5xx.
        const outcome = await runManagedAgent(app, row, { ...request, signal: clientGoneSignal(req, res) });
        return { success: true, run: runView(outcome.run) };
      });
    },

    listManagedAgentRuns: async ({ input, principal }) => {
      const row = await reachableAgent(app, principal, input.params.id);
      const runs = await db
        .selectFrom("managed_agent_runs")
        .selectAll()
        .where("agent_id", "=", Number(row.id))
        .orderBy("id", "desc")
        .limit(input.query.limit)
        .execute();
      return { success: true, runs: runs.map(runView) };
    },
  };
}

/** The run as the chat stream writes a turn: a start line, the run's events, then a completion line. */
async function streamRun(
  app: AppContext,
  row: AgentRow,
  request: Omit<Parameters<typeof runManagedAgent>[2], "signal" | "onEvent" | "onStart">,
  req: Request,
  res: Response,
): Promise<void> {
  const signal = clientGoneSignal(req, res);
  const stream = new ChatStream(res, app.config.agentProgressMs);
  try {
    const outcome = await runManagedAgent(app, row, {
      ...request,
      signal,
      onStart: (runId) => stream.write({ type: "run-start", runId }),
      onEvent: (event) => {
        if (event.type === "tool-call-start") stream.stage = `tool:${event.toolName}`;
        if (event.type === "tool-call-end") stream.stage = "thinking";
        stream.write(event);
      },
    });
    if (outcome.result.error) stream.write({ type: "error", error: outcome.result.error });
    stream.write({
      type: "completion",
      runId: Number(outcome.run.id),
      status: outcome.run.status,
      toolsUsed: outcome.result.toolsUsed,
      metadata: { ...outcome.result.usage, model: outcome.modelAlias, modelId: outcome.modelId },
    });
  } catch (error) {
    app.logger.error({ err: error }, "managed agent run stream failed");
    stream.write({ type: "error", error: error instanceof ApiError ? error.message : "The server failed while running the agent." });
  } finally {
    stream.end();
  }
}
