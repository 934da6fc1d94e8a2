import { type Kysely, sql } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Todo uuids are unique per owner, not server-wide, as folder uuids became in 0010: a uuid written
 * into one user's todos document (any uuid a client likes) is a different todo from the same uuid
 * in another user's, and can neither keep it out of the views nor be mistaken for it.
 */
export async function up(db: Kysely<unknown>, { dialect }: MigrationContext): Promise<void> {
  if (dialect === "sqlite") {
    // SQLite cannot drop a column's unique constraint: rebuild the table without it.
    await sql`create table todos_rebuilt (
      id integer primary key autoincrement,
      uuid text not null,
      owner_id bigint not null references users(id) on delete cascade,
      title text not null,
      description text not null,
      search_text text not null,
      due_date text,
      priority integer,
      completed integer not null,
      completed_at text,
      steps text not null,
      created_at text not null,
      updated_at text not null
    )`.execute(db);
    await sql`insert into todos_rebuilt (id, uuid, owner_id, title, description, search_text, due_date, priority, completed, completed_at, steps, created_at, updated_at)
      select id, uuid, owner_id, title, description, search_text, due_date, priority, completed, completed_at, steps, created_at, updated_at from todos`.execute(
      db,
    );
    await sql`drop table todos`.execute(db);
    await sql`alter table todos_rebuilt rename to todos`.execute(db);
    await db.schema.createIndex("todos_owner_due").on("todos").columns(["owner_id", "due_date"]).execute();
  } else {
    await sql`alter table todos drop constraint todos_uuid_key`.execute(db);
  }
  await db.schema.createIndex("todos_owner_uuid").on("todos").columns(["owner_id", "uuid"]).unique().execute();
}
