/**
 * The search Tandem had before it ranked questions, kept as the `memory-search` benchmark's
 * same-run baseline: every word of the query required (AND; the last one a prefix) in the FTS5
 * index, ranked by bm25() with the title weighing ten times the body, FTS5's own snippet(), within
 * one owner's folders. Run against today's index (its text is column 2, after title and headings).
 */
import { type Kysely, sql } from "kysely";
import type { Schema } from "../../apps/server/src/db/schema";
import { queryWords } from "../../apps/server/src/workspace/search/query-terms";

export interface AndHit {
  readonly id: number;
  readonly title: string;
  readonly snippet: string;
  readonly score: number;
}

export async function andOnlySearch(
  db: Kysely<Schema>,
  ownerId: number,
  folderIds: readonly number[],
  query: string,
  limit: number,
): Promise<AndHit[]> {
  const words = queryWords(query);
  if (words.length === 0) return [];
  const match = words.map((word, i) => `"${word}"${i === words.length - 1 ? "*" : ""}`).join(" ");
  const rows = await db
    .selectFrom(sql`note_search`.as("s"))
    .innerJoin("note_bodies", (join) => join.on(sql<boolean>`note_bodies.rowid = s.rowid`))
    .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
    .select([
      "notes.id",
      "notes.title",
      sql<string>`snippet(note_search, 2, '', '', '…', 24)`.as("snippet"),
      sql<number>`-bm25(note_search, 10.0, 1.0, 1.0)`.as("score"),
    ])
    .where(sql<boolean>`note_search match ${match}`)
    // As it was written: the owner, or a folder shared with them (none here).
    .where((eb) => eb.or([eb("notes.owner_id", "=", ownerId), eb("notes.folder_id", "in", [-1])]))
    .where("notes.folder_id", "in", folderIds.length ? [...folderIds] : [-1])
    .orderBy("score", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, title: r.title, snippet: r.snippet, score: Number(r.score) }));
}
