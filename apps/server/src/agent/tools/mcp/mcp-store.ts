// Remote tool servers as stored: one row per server a user added. The OAuth values (client
// registration, tokens, pending PKCE verifier) are sealed with the server's SecretBox; nothing here
// ever returns one to a caller.

import { createHash } from "node:crypto";
import type { Kysely, Selectable, Updateable } from "kysely";
import type { McpServersTable, Schema } from "../../../db/schema";
import { notFound } from "../../../http/errors";

export type McpServerRow = Selectable<McpServersTable>;
export type McpStatus = McpServerRow["status"];

/** A remote tool as cached from the server's `tools/list`, after vetting. */
export interface RemoteToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readWrite: "read" | "write";
}

export interface McpServerConfig {
  transport: "auto" | "streamable-http" | "sse";
  scope?: string;
}

/** What each sealed column is sealed for: a value can't be moved to another column and opened there. */
export const SEALED = {
  client: "mcp.oauth.client",
  tokens: "mcp.oauth.tokens",
  verifier: "mcp.oauth.verifier",
} as const;

/** The associated data a sealed value is bound to: its column's purpose and its server. */
export const sealedFor = (purpose: (typeof SEALED)[keyof typeof SEALED], serverId: string) => `${purpose}:${serverId}`;

/** A sealed column's value, or undefined when absent or unreadable (sealed with another key, or altered). */
export function openSealed<T>(
  secrets: { open(sealed: string, purpose: string): string },
  sealed: string | null | undefined,
  purpose: (typeof SEALED)[keyof typeof SEALED],
  serverId: string,
): T | undefined {
  if (!sealed) return undefined;
  try {
    return JSON.parse(secrets.open(sealed, sealedFor(purpose, serverId))) as T;
  } catch {
    return undefined;
  }
}

export const hashState = (state: string) => createHash("sha256").update(state, "utf8").digest("base64url");

export function cachedTools(row: Pick<McpServerRow, "tools">): RemoteToolSpec[] {
  try {
    const tools = JSON.parse(row.tools) as unknown;
    return Array.isArray(tools) ? (tools as RemoteToolSpec[]) : [];
  } catch {
    return [];
  }
}

export function serverConfig(row: Pick<McpServerRow, "config">): McpServerConfig {
  const parsed = JSON.parse(row.config) as Partial<McpServerConfig>;
  return { transport: parsed.transport ?? "auto", ...(parsed.scope ? { scope: parsed.scope } : {}) };
}

/** Whether the server's tools are offered: it works, or last failed in a way a retry may mend. */
export const offersTools = (row: Pick<McpServerRow, "status">) => row.status === "connected" || row.status === "error";

/** The caller's server by id; another user's (or none) is the same 404. */
export async function ownedServer(db: Kysely<Schema>, ownerId: number, id: string): Promise<McpServerRow> {
  const row = await db.selectFrom("mcp_servers").selectAll().where("id", "=", id).where("owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound(`tool server ${id}`);
  return row;
}

export async function serverById(db: Kysely<Schema>, id: string): Promise<McpServerRow | undefined> {
  return db.selectFrom("mcp_servers").selectAll().where("id", "=", id).executeTakeFirst();
}

export async function ownerServers(db: Kysely<Schema>, ownerId: number): Promise<McpServerRow[]> {
  return db.selectFrom("mcp_servers").selectAll().where("owner_id", "=", ownerId).orderBy("created_at").orderBy("id").execute();
}

export async function updateServer(db: Kysely<Schema>, id: string, change: Updateable<McpServersTable>, now: Date): Promise<void> {
  await db
    .updateTable("mcp_servers")
    .set({ ...change, updated_at: now.toISOString() })
    .where("id", "=", id)
    .execute();
}

/** The server as the API shows it: status, tools, whether an authorization is stored; never a token. */
export function serverView(row: McpServerRow) {
  const tools = cachedTools(row);
  return {
    id: row.id,
    name: row.name,
    serverUrl: row.server_url,
    config: serverConfig(row),
    status: row.status,
    error: row.error,
    authorized: row.oauth_tokens !== null,
    toolCount: offersTools(row) ? tools.length : 0,
    tools: tools.map((tool) => ({ name: tool.name, description: tool.description, readWrite: tool.readWrite })),
    lastCheckedAt: row.last_checked_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
