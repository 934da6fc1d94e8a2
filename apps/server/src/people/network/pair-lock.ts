import type { Kysely } from "kysely";
import type { Dialect } from "../../db/database";
import type { Schema } from "../../db/schema";

/**
 * Serialises changes between two people: handshake changes (two concurrent identical requests
 * cannot both see "nothing pending" and both insert), and everything that rests on an agent
 * permission against its withdrawal (a grant accept or a delegation checks the permission under
 * this lock, so it either commits before the withdrawal, which then ends its grant, or sees the
 * permission gone). SQLite runs one write transaction at a time already; PostgreSQL locks both
 * users' rows, lower id first. It is the first lock such a transaction takes (then grants, then
 * endpoints), so two of them never wait on each other in opposite orders. `for no key update`,
 * not `for update`: inserting a row that references a user (a grant, a message) takes a key-share
 * lock on that user, which this lock leaves free, so such inserts never queue behind it.
 */
export async function lockPair(tx: Kysely<Schema>, dialect: Dialect, a: number, b: number): Promise<void> {
  if (dialect !== "postgres") return;
  for (const id of [Math.min(a, b), Math.max(a, b)]) {
    await tx.selectFrom("users").select("id").where("id", "=", id).forNoKeyUpdate().execute();
  }
}
