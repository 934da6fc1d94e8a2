import { type Kysely, sql } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Full-text search over note titles and bodies. The materialisers keep `note_bodies` current;
 * each dialect indexes it its own way, so no application code maintains the index:
 * - SQLite: an FTS5 table over note_bodies, kept in step by triggers;
 * - PostgreSQL: a generated, weighted tsvector column with a GIN index. A tsvector holds at most
 *   1 MB, so only the first 100,000 characters of a body are indexed there.
 */
export async function up(db: Kysely<unknown>, { dialect }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable("note_bodies")
    .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  if (dialect === "sqlite") {
    await sql`create virtual table note_search using fts5(title, text, content='note_bodies', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')`.execute(
      db,
    );
    await sql`create trigger note_bodies_search_insert after insert on note_bodies begin
      insert into note_search(rowid, title, text) values (new.rowid, new.title, new.text);
    end`.execute(db);
    await sql`create trigger note_bodies_search_delete after delete on note_bodies begin
      insert into note_search(note_search, rowid, title, text) values ('delete', old.rowid, old.title, old.text);
    end`.execute(db);
    await sql`create trigger note_bodies_search_update after update of title, text on note_bodies begin
      insert into note_search(note_search, rowid, title, text) values ('delete', old.rowid, old.title, old.text);
      insert into note_search(rowid, title, text) values (new.rowid, new.title, new.text);
    end`.execute(db);
  } else {
    await sql`alter table note_bodies add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', left(text, 100000)), 'B')
    ) stored`.execute(db);
    await sql`create index note_bodies_search on note_bodies using gin (search)`.execute(db);
  }
}
