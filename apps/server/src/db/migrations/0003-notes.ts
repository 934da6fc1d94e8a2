import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  // Note metadata, materialised from the owner's workspace document.
  await db.schema
    .createTable("notes")
    .$call(addIdColumn)
    .addColumn("uuid", "text", (c) => c.notNull().unique())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("folder_id", "bigint")
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("pinned", "integer", (c) => c.notNull())
    .addColumn("tags", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("notes_owner_folder").on("notes").columns(["owner_id", "folder_id"]).execute();
  await db.schema.createIndex("notes_owner_updated").on("notes").columns(["owner_id", "updated_at"]).execute();

  // Note bodies as text, materialised from each note document; kept apart from the metadata
  // because the two documents change independently.
  await db.schema
    .createTable("note_bodies")
    .addColumn("uuid", "text", (c) => c.primaryKey())
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("word_count", "integer", (c) => c.notNull())
    .addColumn("size_bytes", "integer", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
}
