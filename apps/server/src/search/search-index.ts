import { type Kysely, sql } from "kysely";
import type { Dialect } from "../db/database";
import type { Schema } from "../db/schema";

export interface SearchHit {
  id: number;
  uuid: string;
  title: string;
  folderId: number | null;
  snippet: string;
  score: number;
}

export interface SearchScope {
  ownerId: number;
  /** Folders of other people shared with the owner: their notes are searched too. */
  sharedFolderIds?: readonly number[];
  /** Only notes in these folders (and none at the root) when given. */
  folderIds?: readonly number[];
}

/**
 * Words of a query, as the index tokenises them. Anything else (quotes, operators) is dropped,
 * so no user input ever reaches a query parser: every word is required, and the last may be a
 * prefix of a longer one.
 */
export function queryWords(query: string): string[] {
  return (query.normalize("NFC").match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 32);
}

/**
 * Emoji in a query (with their modifiers and joined sequences). Neither index tokenises them (they
 * are neither letters nor digits), so they are matched as substrings of the title and text instead.
 */
export function querySymbols(query: string): string[] {
  const found =
    query.normalize("NFC").match(/\p{Extended_Pictographic}(?:\p{Emoji_Modifier}|\uFE0F|\u200D\p{Extended_Pictographic})*/gu) ?? [];
  return [...new Set(found)].slice(0, 8);
}

const SNIPPET_WORDS = 24;
/** Characters either side of an emoji-only match in its snippet (about as long as the indexes' snippets). */
const SYMBOL_SNIPPET_RADIUS = 80;

/** Every symbol appears in the note's title or text (a plain substring test, the same in both dialects). */
function containsSymbols(dialect: Dialect, symbols: readonly string[]) {
  const position = dialect === "sqlite" ? "instr" : "strpos";
  return symbols.map(
    (symbol) => sql<boolean>`(${sql.raw(position)}(note_bodies.text, ${symbol}) > 0 or ${sql.raw(position)}(notes.title, ${symbol}) > 0)`,
  );
}

/** A query of emoji only: the most recently changed notes containing them, with the text around the first one. */
async function searchSymbolsOnly(
  db: Kysely<Schema>,
  dialect: Dialect,
  scope: SearchScope,
  symbols: string[],
  limit: number,
): Promise<SearchHit[]> {
  let query = db
    .selectFrom("note_bodies")
    .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
    .select(["notes.id", "notes.uuid", "notes.title", "notes.folder_id", "note_bodies.text"])
    .where((eb) => eb.or([eb("notes.owner_id", "=", scope.ownerId), eb("notes.folder_id", "in", [...(scope.sharedFolderIds ?? []), -1])]));
  for (const condition of containsSymbols(dialect, symbols)) query = query.where(condition);
  if (scope.folderIds) query = query.where("notes.folder_id", "in", scope.folderIds.length ? [...scope.folderIds] : [-1]);
  const rows = await query.orderBy("notes.updated_at", "desc").orderBy("notes.id").limit(limit).execute();
  return rows.map((r) => {
    const at = Math.max(0, Math.min(...symbols.map((symbol) => r.text.indexOf(symbol)).filter((index) => index >= 0)));
    const start = Math.max(0, at - SYMBOL_SNIPPET_RADIUS);
    const end = Math.min(r.text.length, at + SYMBOL_SNIPPET_RADIUS);
    const snippet = `${start > 0 ? "…" : ""}${r.text.slice(start, end).replace(/\s+/g, " ").trim()}${end < r.text.length ? "…" : ""}`;
    return { id: r.id, uuid: r.uuid, title: r.title, folderId: r.folder_id, snippet, score: 0 };
  });
}

async function searchSqlite(
  db: Kysely<Schema>,
  scope: SearchScope,
  words: string[],
  symbols: string[],
  limit: number,
): Promise<SearchHit[]> {
  const match = words.map((word, i) => `"${word}"${i === words.length - 1 ? "*" : ""}`).join(" ");
  let query = db
    .selectFrom(sql`note_search`.as("s"))
    .innerJoin("note_bodies", (join) => join.on(sql<boolean>`note_bodies.rowid = s.rowid`))
    .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
    .select([
      "notes.id",
      "notes.uuid",
      "notes.title",
      "notes.folder_id",
      sql<string>`snippet(note_search, 1, '', '', '…', ${SNIPPET_WORDS})`.as("snippet"),
      // bm25 is lower for better matches; titles weigh ten times the body.
      sql<number>`-bm25(note_search, 10.0, 1.0)`.as("score"),
    ])
    .where(sql<boolean>`note_search match ${match}`)
    .where((eb) => eb.or([eb("notes.owner_id", "=", scope.ownerId), eb("notes.folder_id", "in", [...(scope.sharedFolderIds ?? []), -1])]));
  for (const condition of containsSymbols("sqlite", symbols)) query = query.where(condition);
  if (scope.folderIds) query = query.where("notes.folder_id", "in", scope.folderIds.length ? [...scope.folderIds] : [-1]);
  const rows = await query.orderBy("score", "desc").limit(limit).execute();
  return rows.map((r) => ({ id: r.id, uuid: r.uuid, title: r.title, folderId: r.folder_id, snippet: r.snippet, score: Number(r.score) }));
}

async function searchPostgres(
  db: Kysely<Schema>,
  scope: SearchScope,
  words: string[],
  symbols: string[],
  limit: number,
): Promise<SearchHit[]> {
  const tsquery = words.map((word, i) => `'${word.replace(/'/g, "")}'${i === words.length - 1 ? ":*" : ""}`).join(" & ");
  const q = sql`to_tsquery('english', ${tsquery})`;
  let query = db
    .selectFrom("note_bodies")
    .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
    .select([
      "notes.id",
      "notes.uuid",
      "notes.title",
      "notes.folder_id",
      sql<string>`ts_headline('english', left(note_bodies.text, 20000), ${q}, ${`StartSel="", StopSel="", MaxWords=${SNIPPET_WORDS}, MinWords=8, FragmentDelimiter=" … "`})`.as(
        "snippet",
      ),
      sql<number>`ts_rank(note_bodies.search, ${q})`.as("score"),
    ])
    .where(sql<boolean>`note_bodies.search @@ ${q}`)
    .where((eb) => eb.or([eb("notes.owner_id", "=", scope.ownerId), eb("notes.folder_id", "in", [...(scope.sharedFolderIds ?? []), -1])]));
  for (const condition of containsSymbols("postgres", symbols)) query = query.where(condition);
  if (scope.folderIds) query = query.where("notes.folder_id", "in", scope.folderIds.length ? [...scope.folderIds] : [-1]);
  const rows = await query.orderBy("score", "desc").orderBy("notes.id").limit(limit).execute();
  return rows.map((r) => ({ id: r.id, uuid: r.uuid, title: r.title, folderId: r.folder_id, snippet: r.snippet, score: Number(r.score) }));
}

/** Ranked full-text search of a user's notes, with a plain-text snippet of each match; emoji match as substrings. */
export async function searchNotes(
  db: Kysely<Schema>,
  dialect: Dialect,
  scope: SearchScope,
  query: string,
  limit: number,
): Promise<SearchHit[]> {
  const words = queryWords(query);
  const symbols = querySymbols(query);
  if (words.length === 0) return symbols.length === 0 ? [] : searchSymbolsOnly(db, dialect, scope, symbols, limit);
  return dialect === "sqlite" ? searchSqlite(db, scope, words, symbols, limit) : searchPostgres(db, scope, words, symbols, limit);
}
