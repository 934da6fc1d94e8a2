import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Clock } from "../../clock";
import type { Schema } from "../../db/schema";
import { badRequest, conflict, unprocessable } from "../../http/errors";

/** How long a key's first answer is replayed (v1 Limits: idempotency window). */
export const IDEMPOTENCY_WINDOW_MS = 5 * 60 * 1000;
const MAX_KEY_CHARS = 255;

/** The request a key stands for: the same key with another body is refused. */
export function requestHash(body: unknown): string {
  return createHash("sha256").update(JSON.stringify(body)).digest("hex");
}

/** The `Idempotency-Key` header, trimmed; absent or empty: none. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (value.length > MAX_KEY_CHARS || !/^[\x21-\x7e]+$/.test(value)) {
    throw badRequest("invalid_idempotency_key", `Idempotency-Key must be 1 to ${MAX_KEY_CHARS} visible ASCII characters`);
  }
  return value;
}

/**
 * Runs `work` at most once per (user, key) within the window and replays its first answer to
 * every repeat. The claim is one insert on the primary key, so of any number of concurrent
 * requests with one key exactly one runs; the others see its row and get a 409 while it runs, or
 * the stored answer once it is done. A request that fails leaves nothing behind (its row is
 * removed), so a retry runs again; only answers are replayed, never errors. A different body under
 * a key still in its window is a 422.
 */
export async function runOncePerKey<T>(
  db: Kysely<Schema>,
  clock: Clock,
  scope: { userId: number; key: string | undefined; hash: string },
  work: () => Promise<T>,
): Promise<{ body: T; replayed: boolean }> {
  const { userId, key, hash } = scope;
  if (key === undefined) return { body: await work(), replayed: false };
  for (let attempt = 0; ; attempt++) {
    const createdAt = clock.iso();
    const claimed = await db
      .insertInto("message_idempotency")
      .values({ user_id: userId, key, request_hash: hash, status_code: null, response: null, created_at: createdAt })
      .onConflict((oc) => oc.columns(["user_id", "key"]).doNothing())
      .returning("key")
      .executeTakeFirst();
    if (claimed) {
      try {
        const body = await work();
        await db
          .updateTable("message_idempotency")
          .set({ status_code: 200, response: JSON.stringify(body) })
          .where("user_id", "=", userId)
          .where("key", "=", key)
          .execute();
        return { body, replayed: false };
      } catch (error) {
        await db.deleteFrom("message_idempotency").where("user_id", "=", userId).where("key", "=", key).execute();
        throw error;
      }
    }
    const existing = await db
      .selectFrom("message_idempotency")
      .selectAll()
      .where("user_id", "=", userId)
      .where("key", "=", key)
      .executeTakeFirst();
    // Gone between the two statements (the first failed, or expired and was swept): claim again.
    if (!existing) {
      if (attempt < 3) continue;
      throw conflict("idempotency_request_in_flight", "A request with this Idempotency-Key is still being processed; retry shortly");
    }
    const age = clock.now().getTime() - Date.parse(existing.created_at);
    if (age > IDEMPOTENCY_WINDOW_MS) {
      // Past the window the key is free again: drop the old row (only that one) and claim anew.
      await db
        .deleteFrom("message_idempotency")
        .where("user_id", "=", userId)
        .where("key", "=", key)
        .where("created_at", "=", existing.created_at)
        .execute();
      if (attempt < 3) continue;
    }
    if (existing.request_hash !== hash) {
      throw unprocessable("idempotency_key_reused", "This Idempotency-Key was used with a different request body in the last 5 minutes");
    }
    if (existing.response === null) {
      throw conflict("idempotency_request_in_flight", "A request with this Idempotency-Key is still being processed; retry shortly");
    }
    return { body: JSON.parse(existing.response) as T, replayed: true };
  }
}

/** Drops keys past the window (maintenance); a row still running past it is a crashed request's. */
export async function pruneIdempotencyKeys(db: Kysely<Schema>, clock: Clock): Promise<void> {
  const cutoff = new Date(clock.now().getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
  await db.deleteFrom("message_idempotency").where("created_at", "<", cutoff).execute();
}
