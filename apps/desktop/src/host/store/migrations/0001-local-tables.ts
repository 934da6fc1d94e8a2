import type { Kysely } from "kysely";

/** The local database's first shape: documents per account, settings, and the bridge's spool. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("documents")
    .addColumn("account", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("state", "blob", (c) => c.notNull())
    .addColumn("unsynced", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("documents_pk", ["account", "name"])
    .execute();

  await db.schema
    .createTable("settings")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("bridge_spool")
    .addColumn("message_id", "text", (c) => c.primaryKey())
    .addColumn("delivery_id", "text", (c) => c.notNull())
    .addColumn("communication_session_id", "text", (c) => c.notNull())
    .addColumn("envelope", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("received_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  // The bridge resumes unfinished entries at start: find them without a scan.
  await db.schema.createIndex("bridge_spool_state").on("bridge_spool").column("state").execute();
}
