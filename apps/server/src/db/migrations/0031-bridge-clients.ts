import { type Kysely, sql } from "kysely";

/**
 * Issue #23, the bridge CLI's last gaps.
 *
 * - `collaborations.correlation_id`: the client's conversation id, kept from the first post. Bridges
 *   re-post a waiting delegation with the fields they stored from its answer, which may lack it; the
 *   task invite must still carry it. Null only in rows from before (their task invite falls back to
 *   the re-post's id, or the collaboration id, as then).
 * - `collaborations.request_hash` goes: a re-post is now matched on what identifies the task (the
 *   stored target, task and correlation id), not on a hash of fields a client may drop.
 * - Device logs lose the kinds bridges do not know (`collaboration.request`, `collaboration.accepted`,
 *   `tool.approval_requested`): a bridge does not move its cursor past them, so each came back at every
 *   reconnect. These kinds now go to the owner's user stream; the requests they announced are still
 *   listed where they always were (collaborations, tool approvals).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("collaborations").addColumn("correlation_id", "text").execute();
  await db.schema.alterTable("collaborations").dropColumn("request_hash").execute();
  const moved = ["collaboration.request", "collaboration.accepted", "tool.approval_requested"];
  await sql`delete from realtime_events where type in (${sql.join(moved)})`.execute(db);
}
