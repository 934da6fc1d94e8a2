import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import { bumpAccessEpoch } from "../sync/access-epoch";

export interface ConnectedAppSummary {
  clientId: string;
  clientName: string | null;
  scopes: string[];
  resources: string[];
  grantedAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

interface GrantPayload {
  openid?: { scope?: string };
  resources?: Record<string, string>;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The user's live grants, one entry per client (its grants merged), newest first. */
export async function listConnectedApps(db: Kysely<Schema>, userId: number): Promise<ConnectedAppSummary[]> {
  const rows = await db
    .selectFrom("oauth_models")
    .select(["client_id", "payload", "created_at", "last_used_at", "expires_at"])
    .where("model", "=", "Grant")
    .where("account_id", "=", String(userId))
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", Date.now())]))
    .orderBy("created_at", "desc")
    .execute();
  const byClient = new Map<string, ConnectedAppSummary & { scopeSet: Set<string>; resourceSet: Set<string> }>();
  for (const row of rows) {
    if (!row.client_id) continue;
    const payload = JSON.parse(row.payload) as GrantPayload;
    let app = byClient.get(row.client_id);
    if (!app) {
      app = {
        clientId: row.client_id,
        clientName: null,
        scopes: [],
        resources: [],
        grantedAt: new Date(row.created_at).toISOString(),
        lastUsedAt: iso(row.last_used_at),
        expiresAt: iso(row.expires_at),
        scopeSet: new Set(),
        resourceSet: new Set(),
      };
      byClient.set(row.client_id, app);
    } else {
      const used = iso(row.last_used_at);
      if (used !== null && (app.lastUsedAt === null || used > app.lastUsedAt)) app.lastUsedAt = used;
    }
    for (const scope of (payload.openid?.scope ?? "").split(" ").filter(Boolean)) app.scopeSet.add(scope);
    for (const [resource, scopes] of Object.entries(payload.resources ?? {})) {
      app.resourceSet.add(resource);
      for (const scope of scopes.split(" ").filter(Boolean)) app.scopeSet.add(scope);
    }
  }
  const names = await clientNames(db, [...byClient.keys()]);
  return [...byClient.values()].map(({ scopeSet, resourceSet, ...app }) => ({
    ...app,
    clientName: names.get(app.clientId) ?? null,
    scopes: [...scopeSet],
    resources: [...resourceSet],
  }));
}

/** The names registered clients gave themselves (`client_name`), by client id; null when none. */
export async function clientNames(db: Kysely<Schema>, clientIds: string[]): Promise<Map<string, string | null>> {
  if (clientIds.length === 0) return new Map();
  const clients = await db
    .selectFrom("oauth_models")
    .select(["id", "payload"])
    .where("model", "=", "Client")
    .where("id", "in", clientIds)
    .execute();
  return new Map(clients.map((c) => [c.id, (JSON.parse(c.payload) as { client_name?: string }).client_name ?? null]));
}

/**
 * Disconnects a client from the user's account: its grants and everything minted under them
 * (refresh tokens, codes) are deleted, and access tokens die with the grant they name; the access
 * epoch moves with them, so every instance re-checks the sync sockets they opened.
 * Answers how many grants went; 0 when the client had none for this user.
 */
export async function revokeConnectedApp(db: Kysely<Schema>, userId: number, clientId: string): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const grants = await tx
      .selectFrom("oauth_models")
      .select("id")
      .where("model", "=", "Grant")
      .where("account_id", "=", String(userId))
      .where("client_id", "=", clientId)
      .execute();
    const ids = grants.map((g) => g.id);
    if (ids.length === 0) return 0;
    await tx.deleteFrom("oauth_models").where("grant_id", "in", ids).execute();
    await tx.deleteFrom("oauth_models").where("model", "=", "Grant").where("id", "in", ids).execute();
    await bumpAccessEpoch(tx);
    return ids.length;
  });
}
