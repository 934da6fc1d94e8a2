import type { Kysely } from "kysely";
import type { Dialect } from "../db/database";
import type { Schema } from "../db/schema";

/**
 * Serialises handshake changes between two people, so two concurrent identical requests cannot
 * both see "nothing pending" and both insert. SQLite runs one write transaction at a time
 * already; PostgreSQL locks both users' rows, lower id first so two transactions never wait on
 * each other in opposite orders.
 */
export async function lockPair(tx: Kysely<Schema>, dialect: Dialect, a: number, b: number): Promise<void> {
  if (dialect !== "postgres") return;
  for (const id of [Math.min(a, b), Math.max(a, b)]) {
    await tx.selectFrom("users").select("id").where("id", "=", id).forUpdate().execute();
  }
}
