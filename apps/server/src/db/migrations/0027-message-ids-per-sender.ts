import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * `agent_messages.client_message_id` is the sender's own id for at-most-once posting (issue 23):
 * unique per (conversation, sender), no longer per conversation, so one member's id can never
 * stand for another member's post. Every row that held the old index holds the new one.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  await db.schema.dropIndex("agent_messages_by_client_id").execute();
  await db.schema
    .createIndex("agent_messages_by_sender_client_id")
    .on("agent_messages")
    .columns(["conversation_id", "sender_id", "client_message_id"])
    .unique()
    .execute();
}
