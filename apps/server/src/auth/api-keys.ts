import { isScope, type Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import { nowIso } from "../clock";
import type { Schema } from "../db/schema";
import { notFound } from "../http/errors";
import type { CredentialVerifier, Principal } from "./principal";
import { issueToken, parseToken, secretMatches } from "./secret-token";

export const API_KEY_PREFIX = "svc_sk_";

/** How often `last_used_at` is written for a busy key: often enough to be useful, rarely enough to stay off the hot path. */
const LAST_USED_RESOLUTION_MS = 60_000;

export interface CreatedApiKey {
  keyId: string;
  apiKey: string;
  userId: number;
  label: string | null;
  scopes: Scope[];
  createdAt: string;
}

export async function createApiKey(
  db: Kysely<Schema>,
  input: { userId: number; scopes: readonly Scope[]; label?: string | null },
): Promise<CreatedApiKey> {
  const issued = issueToken(API_KEY_PREFIX);
  const createdAt = nowIso();
  const scopes = [...new Set(input.scopes)];
  await db
    .insertInto("api_keys")
    .values({
      id: issued.id,
      user_id: input.userId,
      secret_hash: issued.secretHash,
      label: input.label ?? null,
      scopes: JSON.stringify(scopes),
      created_at: createdAt,
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
  return { keyId: issued.id, apiKey: issued.token, userId: input.userId, label: input.label ?? null, scopes, createdAt };
}

/** Revokes a key by its public id; takes effect on the next request, in every process. */
export async function revokeApiKey(db: Kysely<Schema>, keyId: string): Promise<{ keyId: string; revokedAt: string }> {
  const existing = await db.selectFrom("api_keys").select(["id", "revoked_at"]).where("id", "=", keyId).executeTakeFirst();
  if (!existing) throw notFound(`API key ${keyId}`);
  if (existing.revoked_at) return { keyId, revokedAt: existing.revoked_at };
  const revokedAt = nowIso();
  await db.updateTable("api_keys").set({ revoked_at: revokedAt }).where("id", "=", keyId).execute();
  return { keyId, revokedAt };
}

export interface ApiKeySummary {
  keyId: string;
  label: string | null;
  scopes: Scope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A user's keys, newest first; secrets are never readable, only their ids. */
export async function listApiKeys(db: Kysely<Schema>, userId: number): Promise<ApiKeySummary[]> {
  const rows = await db
    .selectFrom("api_keys")
    .selectAll()
    .where("user_id", "=", userId)
    .orderBy("created_at", "desc")
    .orderBy("id")
    .execute();
  return rows.map((row) => ({
    keyId: row.id,
    label: row.label,
    scopes: [...parseScopes(row.scopes)],
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  }));
}

function parseScopes(stored: string): Set<Scope> {
  try {
    const parsed: unknown = JSON.parse(stored);
    if (Array.isArray(parsed)) return new Set(parsed.filter((s): s is Scope => typeof s === "string" && isScope(s)));
  } catch {
    // A damaged row grants nothing rather than failing the request.
  }
  return new Set();
}

/** Verifies `svc_sk_` keys against the database on every request, so revocation is immediate. */
export class ApiKeyVerifier implements CredentialVerifier {
  readonly prefix = API_KEY_PREFIX;
  readonly #lastUsedWritten = new Map<string, number>();

  constructor(private readonly db: Kysely<Schema>) {}

  async verify(token: string): Promise<Principal | null> {
    const parsed = parseToken(API_KEY_PREFIX, token);
    if (!parsed) return null;
    const row = await this.db
      .selectFrom("api_keys")
      .innerJoin("users", "users.id", "api_keys.user_id")
      .select([
        "api_keys.id",
        "api_keys.secret_hash",
        "api_keys.label",
        "api_keys.scopes",
        "api_keys.revoked_at",
        "users.id as user_id",
        "users.username",
      ])
      .where("api_keys.id", "=", parsed.id)
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || !secretMatches(parsed.secret, row.secret_hash)) return null;
    this.#touch(row.id);
    return {
      userId: row.user_id,
      username: row.username,
      credential: { kind: "api_key", id: row.id, label: row.label, scopes: parseScopes(row.scopes) },
    };
  }

  #touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.#lastUsedWritten.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.#lastUsedWritten.set(keyId, now);
    // Fire and forget: a failed bookkeeping write must not fail the request it describes.
    void this.db
      .updateTable("api_keys")
      .set({ last_used_at: new Date(now).toISOString() })
      .where("id", "=", keyId)
      .execute()
      .catch(() => {});
  }
}
