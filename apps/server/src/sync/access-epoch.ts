import { type Kysely, sql } from "kysely";
import type { Schema } from "../db/schema";

/**
 * A counter in the database that moves whenever access may have been taken away: a revoked key,
 * a share removed or changed, a note or folder moved out of a shared folder. Every server
 * instance (and the CLI, which revokes keys in its own process) writes it the same way, and every
 * instance watches it, so open sync connections are re-checked wherever they are.
 */
export async function bumpAccessEpoch(db: Kysely<Schema>): Promise<void> {
  await db.updateTable("sync_access_epoch").set({ epoch: sql`epoch + 1` }).where("id", "=", 1).execute();
}

export async function readAccessEpoch(db: Kysely<Schema>): Promise<number> {
  const row = await db.selectFrom("sync_access_epoch").select("epoch").where("id", "=", 1).executeTakeFirst();
  return Number(row?.epoch ?? 0);
}
