import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Conversations are relational rows, not Yjs documents: they are appended to by the server (the
 * agent, other people's agents, guests), never edited offline, and listed and searched by the
 * server. `kind` says which thread it is: `agent` is the owner's personal agent (view `me`); the
 * messaging and sharing features add `shared_agent` and `group`.
 */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("agent_conversations")
    .$call(addIdColumn)
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("agent_conversations_by_owner")
    .on("agent_conversations")
    .columns(["owner_id", "kind", "updated_at"])
    .execute();

  await db.schema
    .createTable("agent_messages")
    .$call(addIdColumn)
    .addColumn("conversation_id", "bigint", (c) => c.notNull().references("agent_conversations.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("sender_type", "text", (c) => c.notNull())
    .addColumn("sender_id", "text")
    .addColumn("sender_label", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    // complete | incomplete (the client went away mid-answer)
    .addColumn("status", "text", (c) => c.notNull())
    // JSON array of tool names, in the order they ran
    .addColumn("tools_used", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("model", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("agent_messages_by_conversation").on("agent_messages").columns(["conversation_id", "id"]).execute();
}
