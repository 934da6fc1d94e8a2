import { type Kysely, sql } from "kysely";

/**
 * Every note searchable by its title (issue 26): a note whose body document was never stored (made
 * in the desktop with a title and nothing typed) had no `note_bodies` row, which is what search
 * indexes, so it was never found. The workspace view now makes that row (see
 * views/note-view.ts#materializeNoteTitle); this makes it for the notes already there: an empty
 * body dated from the note's creation, with its title, which the index triggers (SQLite) or the
 * generated column (PostgreSQL) pick up.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`insert into note_bodies (uuid, title, text, headings, word_count, size_bytes, updated_at)
    select notes.uuid, notes.title, '', '', 0, 0, notes.created_at from notes
    where not exists (select 1 from note_bodies where note_bodies.uuid = notes.uuid)`.execute(db);
}
