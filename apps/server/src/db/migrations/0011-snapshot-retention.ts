import { type Kysely, sql } from "kysely";

/**
 * Snapshots the server takes by itself (before a PATCH replaces a body, a restore, an import) are
 * thinned out as they age; snapshots a person asked for are kept. Existing automatic ones are
 * recognised by the labels the server gave them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("snapshots")
    .addColumn("automatic", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update snapshots set automatic = 1 where label in ('Before update', 'Before import') or label like 'Before restoring snapshot %'`.execute(
    db,
  );
  await db.schema.createIndex("snapshots_note_created").on("snapshots").columns(["note_uuid", "created_at"]).execute();
}
