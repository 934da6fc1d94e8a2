import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/** Briefings as written for their owner: the history `GET /briefings` reads, newest first. */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("briefings")
    .$call(addIdColumn)
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    // The key that asked for it: briefing usage is counted per key. Not a reference: keys are revoked, not deleted.
    .addColumn("api_key_id", "text")
    .addColumn("time_duration", "text", (c) => c.notNull())
    .addColumn("status_quo_summary", "text", (c) => c.notNull())
    .addColumn("todo_summary", "text", (c) => c.notNull())
    .addColumn("calendar_summary", "text", (c) => c.notNull())
    .addColumn("notes_summary", "text", (c) => c.notNull())
    .addColumn("email_attention_summary", "text", (c) => c.notNull())
    .addColumn("suggestions", "text", (c) => c.notNull())
    .addColumn("token_usage", "integer", (c) => c.notNull())
    .addColumn("generated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("briefings_owner_generated").on("briefings").columns(["owner_id", "generated_at"]).execute();
}
