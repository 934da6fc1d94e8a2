import { type Kysely, sql } from "kysely";
import type { Dialect } from "../../db/database";
import type { Schema } from "../../db/schema";
import type { SearchTerm } from "./query-terms";
import { type RankedNote, type SearchScope, scopeConditions } from "./scope";
import { MARK_END, MARK_START } from "./snippets";

/**
 * Column weights: a title word counts eight times a body word, a heading word six times (heading
 * words are in the body too, so they count in both): a heading names what its section is about,
 * as a title names the note, and a question is often about one section of a long note. The same
 * ratios on both dialects.
 */
const SQLITE_WEIGHTS = { title: 8, headings: 6, text: 1 };
/** ts_rank's weights, in its order {D, C, B, A}: body C, headings B, title A (see migration 0019). */
const POSTGRES_WEIGHTS = "{0.1, 0.125, 0.75, 1.0}";
/** ts_rank normalisation 1: divides by 1 + log(length), so long notes do not win by length alone. */
const POSTGRES_NORMALIZATION = 1;
/** Snippets come from this much of a body at most on PostgreSQL (ts_headline's cost grows with it) and for unmarked notes. */
const SNIPPET_SOURCE_CHARS = 20_000;
/** Below this many rows PostgreSQL's own estimate may be missing or stale, and counting is cheap. */
const POSTGRES_EXACT_COUNT_BELOW = 10_000;

/** FTS5 query text: each term a quoted string (it holds only letters, digits and `_`), any of them. */
function ftsMatch(terms: readonly SearchTerm[]): string {
  return terms.map((term) => `"${term.word}"${term.prefix ? "*" : ""}`).join(" OR ");
}

/** One term as a tsquery source: a quoted lexeme, `:*` for a prefix. */
function tsTerm(term: SearchTerm): string {
  return `'${term.word}'${term.prefix ? ":*" : ""}`;
}

const tsQuery = (term: SearchTerm) => sql`to_tsquery('english', ${tsTerm(term)})`;
const tsAny = (terms: readonly SearchTerm[]) => sql.join(terms.map(tsQuery), sql` || `);

/**
 * FTS5 ranks this many of its best matches before they are joined with the notes and the scope
 * filter: joining every match costs a few µs each, and a common word matches thousands of notes.
 * When fewer than the limit of them are in scope, the query runs again over every match.
 */
const SQLITE_CANDIDATES = 500;

/**
 * SQLite: FTS5's bm25() over an OR of the terms (Porter-stemmed by the index), with the column
 * weights above. BM25 adds up each matched term's weight, which grows with how rare the term is
 * across all notes (IDF) and, saturating, with how often it occurs in the note relative to the
 * note's length: more matched terms and rarer ones rank higher.
 */
async function rankSqlite(
  db: Kysely<Schema>,
  scope: SearchScope,
  terms: readonly SearchTerm[],
  symbols: readonly string[],
  limit: number,
): Promise<RankedNote[]> {
  const { title, headings, text } = SQLITE_WEIGHTS;
  const ranked = async (candidates?: number) => {
    // bm25 is lower for better matches.
    const best = candidates === undefined ? sql`` : sql` order by score desc, rowid limit ${candidates}`;
    const matches = sql`(select rowid, -bm25(note_search, ${sql.lit(title)}, ${sql.lit(headings)}, ${sql.lit(text)}) as score
      from note_search where note_search match ${ftsMatch(terms)}${best})`;
    let query = db
      .selectFrom(matches.as("m"))
      .innerJoin("note_bodies", (join) => join.on(sql<boolean>`note_bodies.rowid = m.rowid`))
      .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
      .select(["notes.id", "notes.uuid", "notes.title", "notes.folder_id", sql<number>`m.score`.as("score")]);
    for (const condition of scopeConditions("sqlite", scope, symbols)) query = query.where(condition);
    const rows = await query.orderBy("score", "desc").orderBy("notes.id").limit(limit).execute();
    return rows.map((r) => ({ id: r.id, uuid: r.uuid, title: r.title, folderId: r.folder_id, score: Number(r.score) }));
  };
  const fromBest = await ranked(Math.max(SQLITE_CANDIDATES, limit * 10));
  return fromBest.length >= limit ? fromBest : ranked();
}

/** BM25's IDF: ln(1 + (N − n + 0.5) / (n + 0.5)) for a term in n of N notes; always positive. */
function idf(notes: number, withTerm: number): number {
  return Math.log(1 + (notes - withTerm + 0.5) / (withTerm + 0.5));
}

/**
 * How rare each term is across all note bodies (the same statistics SQLite's FTS5 keeps): one
 * index lookup per term, and the row count from the planner's estimate on large tables. The
 * planner would scan the table for a common term (it does not cost reading every tsvector), which
 * takes ten times as long as counting through the GIN index: sequential scans are off for this
 * one transaction.
 */
async function postgresIdfs(db: Kysely<Schema>, terms: readonly SearchTerm[]): Promise<number[]> {
  const counts = terms.map((term, i) => sql`(select count(*) from note_bodies where search @@ ${tsQuery(term)}) as ${sql.ref(`d${i}`)}`);
  const row = await db.transaction().execute(async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx);
    const { rows } = await sql<Record<string, number | string>>`select ${sql.join(counts)},
      (select reltuples from pg_class where oid = to_regclass('note_bodies')) as estimate`.execute(tx);
    return rows[0] ?? {};
  });
  const withTerm = terms.map((_, i) => Number(row[`d${i}`] ?? 0));
  let notes = Number(row.estimate ?? -1);
  if (notes < POSTGRES_EXACT_COUNT_BELOW) {
    const exact = await db
      .selectFrom("note_bodies")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    notes = Number(exact.n);
  }
  notes = Math.max(notes, ...withTerm);
  return withTerm.map((n) => idf(notes, n));
}

/**
 * PostgreSQL: the same idea as BM25 from what it offers. Each term's ts_rank (term frequency with
 * the column weights, saturating, normalised by the note's length) times that term's IDF, summed
 * over the terms; notes matching none are never read (the GIN index answers the OR).
 */
async function rankPostgres(
  db: Kysely<Schema>,
  scope: SearchScope,
  terms: readonly SearchTerm[],
  symbols: readonly string[],
  limit: number,
): Promise<RankedNote[]> {
  const idfs = await postgresIdfs(db, terms);
  const score = sql.join(
    terms.map(
      (term, i) =>
        sql`${idfs[i] ?? 0}::float8 * ts_rank(${POSTGRES_WEIGHTS}::float4[], note_bodies.search, ${tsQuery(term)}, ${sql.lit(POSTGRES_NORMALIZATION)})`,
    ),
    sql` + `,
  );
  let query = db
    .selectFrom("note_bodies")
    .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
    .select(["notes.id", "notes.uuid", "notes.title", "notes.folder_id", sql<number>`${score}`.as("score")])
    .where(sql<boolean>`note_bodies.search @@ (${tsAny(terms)})`);
  for (const condition of scopeConditions("postgres", scope, symbols)) query = query.where(condition);
  const rows = await query.orderBy("score", "desc").orderBy("notes.id").limit(limit).execute();
  return rows.map((r) => ({ id: r.id, uuid: r.uuid, title: r.title, folderId: r.folder_id, score: Number(r.score) }));
}

/** The notes in scope matching any of the terms (and every symbol), best first. */
export function rankLexical(
  db: Kysely<Schema>,
  dialect: Dialect,
  scope: SearchScope,
  terms: readonly SearchTerm[],
  symbols: readonly string[],
  limit: number,
): Promise<RankedNote[]> {
  return dialect === "sqlite" ? rankSqlite(db, scope, terms, symbols, limit) : rankPostgres(db, scope, terms, symbols, limit);
}

/** A query of emoji only: the most recently changed notes in scope containing them all. */
export async function rankBySymbols(
  db: Kysely<Schema>,
  dialect: Dialect,
  scope: SearchScope,
  symbols: readonly string[],
  limit: number,
): Promise<RankedNote[]> {
  let query = db
    .selectFrom("note_bodies")
    .innerJoin("notes", "notes.uuid", "note_bodies.uuid")
    .select(["notes.id", "notes.uuid", "notes.title", "notes.folder_id"]);
  for (const condition of scopeConditions(dialect, scope, symbols)) query = query.where(condition);
  const rows = await query.orderBy("notes.updated_at", "desc").orderBy("notes.id").limit(limit).execute();
  return rows.map((r) => ({ id: r.id, uuid: r.uuid, title: r.title, folderId: r.folder_id, score: 0 }));
}

export interface MarkedBody {
  /** The note's text with every token matching a term between MARK_START and MARK_END. */
  marked: string;
  headings: string[];
}

/**
 * The text of each note with the terms' matches marked by the index itself (so stemming and
 * prefixes agree with the ranking), and its heading lines: what snippets are cut from. Notes
 * the terms do not match (found by meaning, or by symbols alone) come unmarked.
 */
export async function markedBodies(
  db: Kysely<Schema>,
  dialect: Dialect,
  terms: readonly SearchTerm[],
  uuids: readonly string[],
): Promise<Map<string, MarkedBody>> {
  const found = new Map<string, MarkedBody>();
  if (uuids.length === 0) return found;
  const add = (rows: { uuid: string; marked: string; headings: string }[]) => {
    for (const row of rows) found.set(row.uuid, { marked: row.marked, headings: row.headings ? row.headings.split("\n") : [] });
  };
  if (terms.length > 0 && dialect === "sqlite") {
    // highlight() works only within a MATCH query; the rowid filter lets FTS5 seek to each note.
    const { rows } = await sql<{ uuid: string; marked: string; headings: string }>`
      select note_bodies.uuid, highlight(note_search, 2, ${MARK_START}, ${MARK_END}) as marked, note_bodies.headings
      from note_search join note_bodies on note_bodies.rowid = note_search.rowid
      where note_search match ${ftsMatch(terms)}
        and note_search.rowid in (select rowid from note_bodies where uuid in (${sql.join(uuids)}))`.execute(db);
    add(rows);
  } else if (terms.length > 0) {
    const options = `HighlightAll=true, StartSel=${MARK_START}, StopSel=${MARK_END}`;
    const rows = await db
      .selectFrom("note_bodies")
      .select([
        "uuid",
        "headings",
        sql<string>`ts_headline('english', left(text, ${SNIPPET_SOURCE_CHARS}), ${tsAny(terms)}, ${options})`.as("marked"),
      ])
      .where("uuid", "in", [...uuids])
      .execute();
    add(rows);
  }
  const unmarked = uuids.filter((uuid) => !found.has(uuid));
  if (unmarked.length > 0) {
    const rows = await db
      .selectFrom("note_bodies")
      .select(["uuid", "headings", sql<string>`substr(text, 1, ${SNIPPET_SOURCE_CHARS})`.as("marked")])
      .where("uuid", "in", unmarked)
      .execute();
    add(rows);
  }
  return found;
}
