import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

export async function up(db: Kysely<unknown>, { addIdColumn, binaryType }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("snapshots")
    .$call(addIdColumn)
    .addColumn("note_uuid", "text", (c) => c.notNull())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("seq", "integer", (c) => c.notNull())
    .addColumn("label", "text")
    .addColumn("state", binaryType, (c) => c.notNull())
    .addColumn("word_count", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("snapshots_note_seq").on("snapshots").columns(["note_uuid", "seq"]).unique().execute();
}
