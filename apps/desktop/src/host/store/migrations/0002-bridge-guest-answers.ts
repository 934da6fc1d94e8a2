import type { Kysely } from "kysely";

/**
 * Guest messages of the owner's share links that this computer took to answer (see
 * bridge/guest-answer-log.ts): one row per server message, written before the runtime starts, so a
 * message is never answered twice, also across restarts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("bridge_guest_answers")
    .addColumn("server_url", "text", (c) => c.notNull())
    .addColumn("message_id", "integer", (c) => c.notNull())
    .addColumn("link_label", "text", (c) => c.notNull())
    .addColumn("guest_name", "text")
    .addColumn("question", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("denied_tools", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("received_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("bridge_guest_answers_pk", ["server_url", "message_id"])
    .execute();
  await db.schema.createIndex("bridge_guest_answers_state").on("bridge_guest_answers").column("state").execute();
}
