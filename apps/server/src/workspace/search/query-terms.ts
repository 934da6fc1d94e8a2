import { STOP_WORDS } from "../text/stop-words";

/**
 * Words of a query, as the indexes tokenise them. Anything else (quotes, operators) is dropped,
 * so no user input ever reaches a query parser.
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

/** At most this many terms reach the index: each costs a posting-list read. */
const MAX_TERMS = 16;

export interface SearchTerm {
  /** Letters, digits and underscores only: safe to quote for either index's parser. */
  readonly word: string;
  /** The query's last word may be the start of a longer one (search as you type). */
  readonly prefix: boolean;
}

/**
 * The terms a query is searched by: its words less stop words, each once (case aside). Any of them
 * may match; the indexes rank notes matching more of them, and rarer ones, higher.
 */
export function queryTerms(query: string): SearchTerm[] {
  const words = queryWords(query);
  const seen = new Set<string>();
  const terms: SearchTerm[] = [];
  words.forEach((word, i) => {
    const key = word.toLowerCase();
    if (STOP_WORDS.has(key) || seen.has(key)) return;
    seen.add(key);
    terms.push({ word, prefix: i === words.length - 1 });
  });
  return terms.slice(0, MAX_TERMS);
}
