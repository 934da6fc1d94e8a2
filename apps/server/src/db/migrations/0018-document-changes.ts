import type { Kysely } from "kysely";

/** The change feed (`GET /sync/changes`) reads documents by the time they were stored. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("documents_updated_at").on("documents").columns(["updated_at", "name"]).execute();
}
