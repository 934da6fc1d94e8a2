import type { Kysely } from "kysely";
import type { Dialect } from "../../db/database";
import type { Schema } from "../../db/schema";
import { decodeVector } from "./embedder";
import { type RankedNote, type SearchScope, scopeConditions } from "./scope";

/**
 * The vector side compares the query with at most this many notes in scope, the most recently
 * changed first: a brute-force scan in JS (no vector index is available on either database here),
 * bounded so a query costs the same on any workspace (about 12 MB read at 1,536 dimensions).
 */
export const VECTOR_CANDIDATES = 2_000;
/** Less similar than this (cosine) is not a match by meaning; unrelated texts score well below it with common models. */
export const MIN_SIMILARITY = 0.3;

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** The notes in scope (holding every symbol) nearest the query's embedding under `model`, best first; score is the cosine. */
export async function rankByVector(
  db: Kysely<Schema>,
  dialect: Dialect,
  scope: SearchScope,
  symbols: readonly string[],
  model: string,
  queryVector: Float32Array,
  limit: number,
): Promise<RankedNote[]> {
  let query = db
    .selectFrom("note_embeddings")
    .innerJoin("notes", "notes.uuid", "note_embeddings.uuid")
    .innerJoin("note_bodies", "note_bodies.uuid", "note_embeddings.uuid")
    .select(["notes.id", "notes.uuid", "notes.title", "notes.folder_id", "note_embeddings.vector"])
    .where("note_embeddings.model", "=", model)
    .where("note_embeddings.dimensions", "=", queryVector.length);
  for (const condition of scopeConditions(dialect, scope, symbols)) query = query.where(condition);
  const rows = await query.orderBy("notes.updated_at", "desc").orderBy("notes.id").limit(VECTOR_CANDIDATES).execute();
  return rows
    .map((r) => ({ id: r.id, uuid: r.uuid, title: r.title, folderId: r.folder_id, score: dot(queryVector, decodeVector(r.vector)) }))
    .filter((note) => note.score >= MIN_SIMILARITY)
    .sort((a, b) => b.score - a.score || a.id - b.id)
    .slice(0, limit);
}
