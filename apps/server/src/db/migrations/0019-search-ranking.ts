import { type Kysely, sql } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Search that ranks natural-language questions (see search/):
 * - `note_bodies.headings`: the note's heading lines, indexed as a column of their own so their
 *   words weigh more than the body's (and snippets can be cut at sections);
 * - the index rebuilt with it: on SQLite an FTS5 table of (title, headings, text), Porter-stemmed,
 *   repopulated here; on PostgreSQL the generated tsvector weighs title A, headings B, body C;
 * - every note document's views marked stale, so the server recomputes them at start (from the
 *   stored documents, as after a crash) and fills `headings` in;
 * - `note_embeddings`: one vector per note and embedding model, when an embedding model is
 *   configured; float32 little-endian, unit length. `title` and `body_updated_at` are what the
 *   vector was computed from, so the indexer finds stale ones with a join; `digest` lets it skip a
 *   body whose views were recomputed without a change.
 */
export async function up(db: Kysely<unknown>, { dialect, binaryType }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable("note_bodies")
    .addColumn("headings", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  if (dialect === "sqlite") {
    for (const trigger of ["insert", "delete", "update"]) await sql`drop trigger ${sql.raw(`note_bodies_search_${trigger}`)}`.execute(db);
    await sql`drop table note_search`.execute(db);
    await sql`create virtual table note_search using fts5(title, headings, text, content='note_bodies', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')`.execute(
      db,
    );
    await sql`create trigger note_bodies_search_insert after insert on note_bodies begin
      insert into note_search(rowid, title, headings, text) values (new.rowid, new.title, new.headings, new.text);
    end`.execute(db);
    await sql`create trigger note_bodies_search_delete after delete on note_bodies begin
      insert into note_search(note_search, rowid, title, headings, text) values ('delete', old.rowid, old.title, old.headings, old.text);
    end`.execute(db);
    await sql`create trigger note_bodies_search_update after update of title, headings, text on note_bodies begin
      insert into note_search(note_search, rowid, title, headings, text) values ('delete', old.rowid, old.title, old.headings, old.text);
      insert into note_search(rowid, title, headings, text) values (new.rowid, new.title, new.headings, new.text);
    end`.execute(db);
    await sql`insert into note_search(note_search) values ('rebuild')`.execute(db);
  } else {
    await sql`drop index note_bodies_search`.execute(db);
    await sql`alter table note_bodies drop column search`.execute(db);
    await sql`alter table note_bodies add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', headings), 'B') ||
      setweight(to_tsvector('english', left(text, 100000)), 'C')
    ) stored`.execute(db);
    await sql`create index note_bodies_search on note_bodies using gin (search)`.execute(db);
  }
  await sql`update documents set views_version = 0 where name like 'note:%'`.execute(db);

  await db.schema
    .createTable("note_embeddings")
    .addColumn("uuid", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("body_updated_at", "text", (c) => c.notNull())
    .addColumn("digest", "text", (c) => c.notNull())
    .addColumn("dimensions", "integer", (c) => c.notNull())
    .addColumn("vector", binaryType, (c) => c.notNull())
    .addPrimaryKeyConstraint("note_embeddings_pk", ["uuid", "model"])
    .execute();
}
