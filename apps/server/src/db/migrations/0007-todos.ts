import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  // Todos, materialised from each user's todos document.
  await db.schema
    .createTable("todos")
    .$call(addIdColumn)
    .addColumn("uuid", "text", (c) => c.notNull().unique())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    // Lower-cased title and description, so text filters need no dialect-specific case folding.
    .addColumn("search_text", "text", (c) => c.notNull())
    .addColumn("due_date", "text")
    .addColumn("priority", "integer")
    .addColumn("completed", "integer", (c) => c.notNull())
    .addColumn("completed_at", "text")
    .addColumn("steps", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("todos_owner_due").on("todos").columns(["owner_id", "due_date"]).execute();
}
