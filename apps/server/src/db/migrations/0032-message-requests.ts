import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Message requests (issue 23, docs/messaging.md#message-requests): human mode from someone the
 * recipient is not connected with (and not on the team with) is delivered, but held.
 *
 * - `message_requests`: one row per opening, sender → recipient; `status` pending | accepted |
 *   ignored | blocked. `opened_at` is what the per-sender daily limit counts (in the database, so
 *   every instance counts the same rows). At most one pending row per pair, and a blocked row
 *   stays as the block.
 * - `agent_messages.request_id`: a message held by a request. It is stored in the pair's
 *   conversation like any other (the sender sees what they sent), but its recipient sees it only
 *   once that request is accepted.
 */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("message_requests")
    .$call(addIdColumn)
    .addColumn("sender_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("recipient_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("conversation_id", "bigint", (c) => c.notNull().references("agent_conversations.id").onDelete("cascade"))
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("opened_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("resolved_at", "text")
    .execute();
  await db.schema.createIndex("message_requests_to").on("message_requests").columns(["recipient_id", "status"]).execute();
  await db.schema.createIndex("message_requests_from").on("message_requests").columns(["sender_id", "opened_at"]).execute();
  await db.schema.alterTable("agent_messages").addColumn("request_id", "bigint").execute();
  await db.schema.createIndex("agent_messages_by_request").on("agent_messages").column("request_id").execute();
}
