import { type Kysely, sql } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Who owns what a client writes, and views that accept anything a document can hold:
 *
 * - `note_owners`: the user whose workspace first listed a note uuid. Recorded by the server and
 *   never given away, so listing someone else's uuid in one's own workspace claims nothing.
 *   Seeded from the notes view, which until now was the only record.
 * - Folder uuids are unique per owner, not server-wide, so a uuid written into one workspace
 *   never collides with (or blocks) another user's folder.
 *   A share names its folder by owner and uuid for the same reason.
 * - Sibling folders may share a name (two offline clients creating "Inbox", a rename swap): the
 *   unique index on names becomes a plain one for lookups.
 * - `documents.version` counts stores and `views_version` is the stored version the views were
 *   last computed from, so a start after a crash recomputes the views of documents stored since.
 *   Existing rows start with stale views: the first start repairs views a bad write may have wedged.
 * - `sync_access_epoch`: bumped by anything that can take access away (revoked key, unshare, role
 *   change, a note or folder moved out of a share); every server instance watches it and re-checks
 *   its open sync connections when it moves.
 */
export async function up(db: Kysely<unknown>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("note_owners")
    .addColumn("uuid", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .execute();
  await sql`insert into note_owners (uuid, owner_id) select uuid, owner_id from notes`.execute(db);

  if (dialect === "sqlite") {
    // SQLite cannot drop a column's unique constraint: rebuild the table without it.
    await sql`create table folders_rebuilt (
      id integer primary key autoincrement,
      uuid text not null,
      owner_id bigint not null references users(id) on delete cascade,
      parent_id bigint,
      parent_key bigint not null,
      name text not null,
      name_key text not null,
      icon text,
      created_at text not null,
      updated_at text not null
    )`.execute(db);
    await sql`insert into folders_rebuilt select id, uuid, owner_id, parent_id, parent_key, name, name_key, icon, created_at, updated_at from folders`.execute(
      db,
    );
    await sql`drop table folders`.execute(db);
    await sql`alter table folders_rebuilt rename to folders`.execute(db);
    await db.schema.createIndex("folders_parent").on("folders").column("parent_id").execute();
  } else {
    await sql`alter table folders drop constraint folders_uuid_key`.execute(db);
    await db.schema.dropIndex("folders_sibling_name").execute();
  }
  await db.schema.createIndex("folders_owner_uuid").on("folders").columns(["owner_id", "uuid"]).unique().execute();
  await db.schema.createIndex("folders_sibling_name").on("folders").columns(["owner_id", "parent_key", "name_key"]).execute();

  await db.schema.alterTable("folder_shares").renameTo("folder_shares_old").execute();
  await db.schema.dropIndex("folder_shares_grantee").execute();
  await db.schema
    .createTable("folder_shares")
    .addColumn("folder_uuid", "text", (c) => c.notNull())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("grantee_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("folder_shares_owner_folder_grantee", ["owner_id", "folder_uuid", "grantee_id"])
    .execute();
  await sql`insert into folder_shares (folder_uuid, owner_id, grantee_id, role, created_at)
    select folder_uuid, owner_id, grantee_id, role, created_at from folder_shares_old`.execute(db);
  await db.schema.dropTable("folder_shares_old").execute();
  await db.schema.createIndex("folder_shares_grantee").on("folder_shares").column("grantee_id").execute();

  await db.schema
    .alterTable("documents")
    .addColumn("version", "bigint", (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema
    .alterTable("documents")
    .addColumn("views_version", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable("sync_access_epoch")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("epoch", "bigint", (c) => c.notNull())
    .execute();
  await sql`insert into sync_access_epoch (id, epoch) values (1, 0)`.execute(db);
}
