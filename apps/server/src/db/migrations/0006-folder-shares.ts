import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  // A folder (and everything below it) shared by its owner with another user, by the folder's uuid
  // so the share survives anything the view does to numeric rows.
  await db.schema
    .createTable("folder_shares")
    .addColumn("folder_uuid", "text", (c) => c.notNull())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("grantee_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("folder_shares_pk", ["folder_uuid", "grantee_id"])
    .execute();
  await db.schema.createIndex("folder_shares_grantee").on("folder_shares").column("grantee_id").execute();
}
