import { isScope, type Scope } from "@tandem/core";
import type { CompiledQuery, Kysely } from "kysely";
import { nowIso } from "../clock";
import type { Schema } from "../db/schema";
import type { SyncReads } from "../db/sync-reads";
import { notFound } from "../http/errors";
import { bumpAccessEpoch } from "../sync/access-epoch";
import { agentKeyScopes } from "./agent-key-scopes";
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
  input: { userId: number; scopes: readonly Scope[]; label?: string | null; agentId?: number },
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
      agent_id: input.agentId ?? null,
    })
    .execute();
  return { keyId: issued.id, apiKey: issued.token, userId: input.userId, label: input.label ?? null, scopes, createdAt };
}

/**
 * Revokes a key by its public id; takes effect on the next request, in every process, and closes
 * sync connections opened with it (through the access epoch, which every server instance watches).
 */
export async function revokeApiKey(db: Kysely<Schema>, keyId: string): Promise<{ keyId: string; revokedAt: string }> {
  const existing = await db.selectFrom("api_keys").select(["id", "revoked_at"]).where("id", "=", keyId).executeTakeFirst();
  if (!existing) throw notFound(`API key ${keyId}`);
  if (existing.revoked_at) return { keyId, revokedAt: existing.revoked_at };
  const revokedAt = nowIso();
  await db.transaction().execute(async (tx) => {
    await tx.updateTable("api_keys").set({ revoked_at: revokedAt }).where("id", "=", keyId).execute();
    await bumpAccessEpoch(tx);
  });
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
    // A managed agent's keys are listed with the agent (GET /managed-agents/{id}/keys).
    .where("agent_id", "is", null)
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

/**
 * `parseScopes` for the verifier, remembered by the stored text: a few distinct scope lists
 * cover every key, and each request would otherwise parse its key's again. This caches a pure
 * function of text the request just read from the database, not a credential: the row is still
 * read, and its revocation checked, on every request. The sets are shared, hence read-only.
 */
const parsedScopes = new Map<string, ReadonlySet<Scope>>();
const PARSED_SCOPES_LIMIT = 256;

function scopesOf(stored: string): ReadonlySet<Scope> {
  let scopes = parsedScopes.get(stored);
  if (!scopes) {
    scopes = parseScopes(stored);
    if (parsedScopes.size >= PARSED_SCOPES_LIMIT) parsedScopes.clear();
    parsedScopes.set(stored, scopes);
  }
  return scopes;
}

/** The unrevoked keys among `keyIds`, each with its user. */
function keyLookup(db: Kysely<Schema>, keyIds: readonly string[]) {
  return db
    .selectFrom("api_keys")
    .innerJoin("users", "users.id", "api_keys.user_id")
    .leftJoin("managed_agents", "managed_agents.id", "api_keys.agent_id")
    .select([
      "api_keys.id",
      "api_keys.secret_hash",
      "api_keys.label",
      "api_keys.scopes",
      "users.id as user_id",
      "users.username",
      "api_keys.agent_id",
      "managed_agents.handle as agent_handle",
      "managed_agents.status as agent_status",
      "managed_agents.agent_grant",
    ])
    .where("api_keys.id", "in", keyIds)
    .where("api_keys.revoked_at", "is", null);
}

type KeyRow = Awaited<ReturnType<ReturnType<typeof keyLookup>["executeTakeFirstOrThrow"]>>;

interface Waiter {
  resolve(row: KeyRow | undefined): void;
  reject(error: unknown): void;
}

/** Most keys one lookup statement asks for; more wait for the next statement. */
const MAX_KEYS_PER_LOOKUP = 32;

/**
 * Reads key rows for concurrent requests with as few statements as possible, and never from an
 * older snapshot than a request could have seen on its own: nothing is remembered between
 * statements, and a request only ever joins a statement that has not been sent yet.
 *
 * At most one statement is out at a time. Keys asked for while it is out queue up, and the next
 * statement asks for all of them at once (`id in (…)`): under load, one round trip to the
 * database serves many requests, and each of those statements starts after the requests it
 * serves arrived, so a key revoked (by any process) before a request arrived is seen as revoked.
 * An idle server sends each lookup at once, as before.
 */
class KeyLookups {
  #queued = new Map<string, Waiter[]>();
  #sending = false;
  /** Compiled statements by (padded) number of keys: compiling costs more than SQLite takes to run one. */
  readonly #compiled = new Map<number, CompiledQuery<KeyRow>>();

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly now: SyncReads | undefined,
  ) {}

  /**
   * The key's row read here and now on the synchronous connection (null: no such unrevoked key),
   * or undefined when there is none or it could not answer ({@link find} then). Nothing to batch:
   * the read costs microseconds and starts after the request arrived, as a fresh one does.
   */
  findNow(keyId: string): KeyRow | null | undefined {
    if (!this.now) return undefined;
    const rows = this.now.rowsNow<KeyRow>({ ...this.#statementFor(1), parameters: [keyId] });
    return rows && (rows[0] ?? null);
  }

  find(keyId: string): Promise<KeyRow | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.#queued.get(keyId);
      if (waiters) waiters.push({ resolve, reject });
      else this.#queued.set(keyId, [{ resolve, reject }]);
      if (!this.#sending) void this.#send();
    });
  }

  async #send(): Promise<void> {
    this.#sending = true;
    while (this.#queued.size > 0) {
      const batch = new Map<string, Waiter[]>();
      for (const [keyId, waiters] of this.#queued) {
        if (batch.size === MAX_KEYS_PER_LOOKUP) break;
        batch.set(keyId, waiters);
        this.#queued.delete(keyId);
      }
      try {
        const keyIds = [...batch.keys()];
        const { rows } = await this.db.executeQuery<KeyRow>({ ...this.#statementFor(keyIds.length), parameters: padded(keyIds) });
        const byId = new Map(rows.map((row) => [row.id, row]));
        for (const [keyId, waiters] of batch) for (const waiter of waiters) waiter.resolve(byId.get(keyId));
      } catch (error) {
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      }
    }
    this.#sending = false;
  }

  #statementFor(count: number): CompiledQuery<KeyRow> {
    const size = paddedSize(count);
    let compiled = this.#compiled.get(size);
    if (!compiled) {
      const probe = Array.from({ length: size }, (_, i) => `\u0000probe${i}`);
      compiled = keyLookup(this.db, probe).compile();
      // The key ids, in order, must be the only parameters: each statement binds its own.
      if (compiled.parameters.length !== size || compiled.parameters.some((value, i) => value !== probe[i])) {
        throw new Error("the API key lookup must have no parameters but the key ids");
      }
      this.#compiled.set(size, compiled);
    }
    return compiled;
  }
}

/** Batches are padded to a power of two, so a handful of statement shapes serve every size. */
function paddedSize(count: number): number {
  let size = 1;
  while (size < count) size *= 2;
  return size;
}

/** The key ids, the last repeated up to the padded size (`in` ignores the repeats). */
function padded(keyIds: readonly string[]): string[] {
  const last = keyIds[keyIds.length - 1] as string;
  return Array.from({ length: paddedSize(keyIds.length) }, (_, i) => keyIds[i] ?? last);
}

/**
 * Verifies `svc_sk_` keys against the database on every request, so revocation is immediate: no
 * credential is cached, whichever process revoked it.
 */
export class ApiKeyVerifier implements CredentialVerifier {
  readonly prefix = API_KEY_PREFIX;
  readonly #lastUsedWritten = new Map<string, number>();
  readonly #lookups: KeyLookups;

  /**
   * @param db where `last_used_at` is written
   * @param reads where key rows are read (`Database.reads`: on SQLite, without a trip through the thread pool)
   * @param readsNow the connection behind `reads` on SQLite (`Database.readsNow`), read without Kysely
   */
  constructor(
    private readonly db: Kysely<Schema>,
    reads: Kysely<Schema> = db,
    readsNow?: SyncReads,
  ) {
    this.#lookups = new KeyLookups(reads, readsNow);
  }

  async verify(token: string): Promise<Principal | null> {
    const parsed = parseToken(API_KEY_PREFIX, token);
    if (!parsed) return null;
    const found = this.#lookups.findNow(parsed.id);
    const row = found === undefined ? await this.#lookups.find(parsed.id) : found;
    if (!row || !secretMatches(parsed.secret, row.secret_hash)) return null;
    this.#touch(row.id);
    if (row.agent_id !== null) {
      // An agent's key whose agent is gone is no key (the cascade removes it too).
      if (row.agent_handle === null || row.agent_status === null) return null;
      return {
        userId: row.user_id,
        username: row.username,
        credential: {
          kind: "api_key",
          id: row.id,
          label: row.label,
          scopes: agentKeyScopes(row.agent_grant ?? ""),
          agent: { id: Number(row.agent_id), handle: row.agent_handle, status: row.agent_status },
        },
      };
    }
    return {
      userId: row.user_id,
      username: row.username,
      credential: { kind: "api_key", id: row.id, label: row.label, scopes: scopesOf(row.scopes) },
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
