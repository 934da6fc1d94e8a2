import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("users")
    .$call(addIdColumn)
    .addColumn("username", "text", (c) => c.notNull().unique())
    .addColumn("name", "text")
    .addColumn("email", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("secret_hash", "text", (c) => c.notNull())
    .addColumn("label", "text")
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_used_at", "text")
    .addColumn("revoked_at", "text")
    .execute();
  await db.schema.createIndex("api_keys_user").on("api_keys").column("user_id").execute();

  await db.schema
    .createTable("folders")
    .$call(addIdColumn)
    .addColumn("uuid", "text", (c) => c.notNull().unique())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    // A view of the workspace document, where a parent can vanish or a concurrent move can
    // make a cycle: the materialiser resolves those, so no foreign key here.
    .addColumn("parent_id", "bigint")
    .addColumn("parent_key", "bigint", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("name_key", "text", (c) => c.notNull())
    .addColumn("icon", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("folders_sibling_name").on("folders").columns(["owner_id", "parent_key", "name_key"]).unique().execute();
  await db.schema.createIndex("folders_parent").on("folders").column("parent_id").execute();
}
