// Which tool namespaces each user switched off. One place decides, for every path a tool is
// reached by (`POST /tools`, `GET /tools`, the agent's runs), so a disabled namespace is gone
// from all of them at once.

import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { badRequest } from "../../http/errors";
import type { AnyAgentTool, ToolSource } from "./agent-tool";
import { remoteToolsFor } from "./mcp/remote-tools";
import { NATIVE_TOOLS, RESERVED_TOOL_NAMES, toolsetFor } from "./registry";
import type { RunGrant } from "./run-grant";

export interface NamespaceState {
  namespace: string;
  sources: ToolSource[];
  toolCount: number;
  enabled: boolean;
}

export interface NamespacesView {
  namespaces: NamespaceState[];
  summary: { total: number; enabled: number; disabled: number };
}

export async function disabledNamespaces(db: Kysely<Schema>, userId: number): Promise<Set<string>> {
  const rows = await db.selectFrom("disabled_tool_namespaces").select("namespace").where("user_id", "=", userId).execute();
  return new Set(rows.map((row) => row.namespace));
}

/** Every tool of the user's registry: ours, then their remote tool servers' (namespace = server name). */
export async function userTools(db: Kysely<Schema>, userId: number): Promise<AnyAgentTool[]> {
  return [...NATIVE_TOOLS, ...(await remoteToolsFor(db, userId, RESERVED_TOOL_NAMES))];
}

/** The tools a run under `grant` has: its scopes' tools, less the owner's disabled namespaces. */
export async function runToolset(db: Kysely<Schema>, grant: RunGrant): Promise<AnyAgentTool[]> {
  // Remote tools need an os.tools scope: a grant without one need not look them up.
  const remote = grant.scopes.has("os.tools:read") || grant.scopes.has("os.tools:write");
  const tools = remote ? await userTools(db, grant.ownerId) : NATIVE_TOOLS;
  return toolsetFor(grant, tools, await disabledNamespaces(db, grant.ownerId));
}

export async function namespacesView(db: Kysely<Schema>, userId: number): Promise<NamespacesView> {
  const disabled = await disabledNamespaces(db, userId);
  const byName = new Map<string, NamespaceState>();
  for (const tool of await userTools(db, userId)) {
    const state = byName.get(tool.namespace) ?? {
      namespace: tool.namespace,
      sources: [],
      toolCount: 0,
      enabled: !disabled.has(tool.namespace),
    };
    if (!state.sources.includes(tool.source)) state.sources.push(tool.source);
    state.toolCount++;
    byName.set(tool.namespace, state);
  }
  const namespaces = [...byName.values()];
  const enabled = namespaces.filter((n) => n.enabled).length;
  return { namespaces, summary: { total: namespaces.length, enabled, disabled: namespaces.length - enabled } };
}

/** Switches namespaces on and off; a name no tool has is a 400 and nothing changes. */
export async function updateNamespaces(
  db: Kysely<Schema>,
  userId: number,
  change: { enable?: readonly string[]; disable?: readonly string[] },
  now: Date,
): Promise<NamespacesView> {
  const known = new Set((await userTools(db, userId)).map((tool) => tool.namespace));
  const enable = [...new Set(change.enable ?? [])];
  const disable = [...new Set(change.disable ?? [])];
  const unknown = [...enable, ...disable].filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw badRequest(
      "unknown_namespace",
      `no tool namespace is named ${unknown.map((n) => `"${n}"`).join(", ")} (known: ${[...known].join(", ")})`,
    );
  }
  await db.transaction().execute(async (tx) => {
    if (enable.length > 0) {
      await tx.deleteFrom("disabled_tool_namespaces").where("user_id", "=", userId).where("namespace", "in", enable).execute();
    }
    if (disable.length > 0) {
      await tx
        .insertInto("disabled_tool_namespaces")
        .values(disable.map((namespace) => ({ user_id: userId, namespace, disabled_at: now.toISOString() })))
        .onConflict((oc) => oc.columns(["user_id", "namespace"]).doNothing())
        .execute();
    }
  });
  return namespacesView(db, userId);
}
