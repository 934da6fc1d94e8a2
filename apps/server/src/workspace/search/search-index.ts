import type { Kysely } from "kysely";
import type { Dialect } from "../../db/database";
import type { Schema } from "../../db/schema";
import type { Embedder } from "./embedder";
import { markedBodies, rankBySymbols, rankLexical } from "./lexical-search";
import { querySymbols, queryTerms } from "./query-terms";
import type { RankedNote, SearchScope } from "./scope";
import { buildSnippet, markSymbols } from "./snippets";
import { rankByVector } from "./vector-search";

export type { SearchScope } from "./scope";

export interface SearchHit {
  id: number;
  uuid: string;
  title: string;
  folderId: number | null;
  snippet: string;
  score: number;
}

/** Reciprocal rank fusion's usual constant: a note's share from one list is 1 / (60 + its rank there). */
const RRF_K = 60;
/** With embeddings, each side contributes at least this many candidates to the fusion. */
const FUSION_DEPTH = 20;

/**
 * Merges ranked lists by reciprocal rank fusion: each note scores the sum of 1 / (60 + rank) over
 * the lists it is in, so one found by words and by meaning beats one found by either alone, and
 * no list's own scale matters. Ties keep the first list's order (words before meaning).
 */
function fuse(lists: readonly (readonly RankedNote[])[]): RankedNote[] {
  const fused = new Map<string, RankedNote>();
  for (const list of lists) {
    list.forEach((note, index) => {
      const entry = fused.get(note.uuid) ?? { ...note, score: 0 };
      entry.score += 1 / (RRF_K + index + 1);
      fused.set(note.uuid, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score);
}

/**
 * Ranked search of the notes a scope allows, for questions as much as keywords: stop words are
 * dropped, any remaining word may match (stemmed), and notes are ranked BM25-style (more matched
 * words, rarer words, and words in titles and headings rank higher); emoji must all appear. With
 * an embedding model, the words' ranking is fused with a ranking by meaning, so a note can be found
 * without sharing a word with the query; when the provider fails, words alone answer. Each hit has
 * a short snippet from its best-matching section.
 */
export async function searchNotes(
  db: Kysely<Schema>,
  dialect: Dialect,
  scope: SearchScope,
  query: string,
  limit: number,
  embedder?: Embedder,
): Promise<SearchHit[]> {
  const terms = queryTerms(query);
  const symbols = querySymbols(query);
  let ranked: RankedNote[];
  if (terms.length > 0) {
    const depth = embedder ? Math.max(limit, FUSION_DEPTH) : limit;
    const [lexical, queryVector] = await Promise.all([
      rankLexical(db, dialect, scope, terms, symbols, depth),
      embedder ? embedder.embedQuery(query) : null,
    ]);
    ranked =
      embedder && queryVector
        ? fuse([lexical, await rankByVector(db, dialect, scope, symbols, embedder.modelId, queryVector, depth)]).slice(0, limit)
        : lexical;
  } else if (symbols.length > 0) {
    ranked = await rankBySymbols(db, dialect, scope, symbols, limit);
  } else {
    // Only stop words ("what is it"): nothing to look for.
    return [];
  }
  const bodies = await markedBodies(
    db,
    dialect,
    terms,
    ranked.map((note) => note.uuid),
  );
  return ranked.map((note) => {
    const body = bodies.get(note.uuid);
    const snippet = body ? buildSnippet(markSymbols(body.marked, symbols), body.headings) : "";
    return { ...note, snippet };
  });
}
