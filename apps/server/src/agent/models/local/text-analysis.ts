/**
 * Small, deterministic text analysis for the `local` model: words, stems, sentences, sections.
 * No weights, no dictionaries beyond a stop-word list: the same text always gives the same result.
 */

import { mostInformative, splitSentences } from "../../../workspace/notes/extractive-summary";
import { STOP_WORDS } from "../../../workspace/text/stop-words";

/** Words of requests that say how to ask, not what about. */
const REQUEST_WORDS = new Set(["tell", "show", "give", "find", "anything", "something", "know", "say", "said", "notes", "note"]);
const isFiller = (word: string) => STOP_WORDS.has(word) || REQUEST_WORDS.has(word);

/** Lower-cased words of a text, letters and digits only. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A light suffix-stripping stem: enough for "goals" to meet "goal" and "planning" to meet "plan". */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  for (const suffix of ["ations", "ation", "ings", "ing", "ies", "edly", "ed", "es", "s"]) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      const base = word.slice(0, -suffix.length);
      if (suffix === "ies") return `${base}y`;
      // "planning" → "plann" → "plan": a doubled final consonant left by the suffix goes too.
      return /([b-df-hj-np-tv-z])\1$/.test(base) ? base.slice(0, -1) : base;
    }
  }
  return word;
}

/** The words that carry meaning in a request, as written (lower-cased): stop words dropped, no repeats. */
export function contentWords(text: string): string[] {
  return [...new Set(words(text).filter((w) => !isFiller(w)))];
}

/** The stems that carry meaning in a request: stop words dropped, order kept, no repeats. */
export function keyTerms(text: string): string[] {
  return [
    ...new Set(
      words(text)
        .filter((w) => !isFiller(w))
        .map(stem),
    ),
  ];
}

/** How many of the terms a text contains (each counted once). */
export function termHits(text: string, terms: readonly string[]): number {
  const present = new Set(words(text).map(stem));
  return terms.filter((term) => present.has(term)).length;
}

/** Markdown to plain sentences: list items and sentences each become one; headings are labels, not sentences. */
export function sentences(markdown: string): string[] {
  const lines = markdown
    .split(/\n+/)
    .filter((line) => !/^\s{0,3}#{1,6}\s/.test(line))
    .map((line) =>
      line
        .replace(/^\s*([-*+]\s+(\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*)/, "")
        .replace(/[*_`]+/g, "")
        .trim(),
    );
  return splitSentences(lines.join("\n"));
}

export interface Section {
  readonly heading: string;
  readonly body: string;
}

/** The `#`-headed sections of a Markdown text; text before the first heading is a section without one. */
export function sections(markdown: string): Section[] {
  const found: Section[] = [];
  let heading = "";
  let body: string[] = [];
  const flush = () => {
    const text = body.join("\n").trim();
    if (heading || text) found.push({ heading, body: text });
  };
  for (const line of markdown.split("\n")) {
    const match = /^\s{0,3}#{1,6}\s+(.*)$/.exec(line);
    if (match) {
      flush();
      heading = (match[1] ?? "").trim();
      body = [];
    } else body.push(line);
  }
  flush();
  return found;
}

/**
 * The sentences of a text that best match the terms, in the order they appear; without terms (or
 * without any hit), the text's most informative sentences by how often its own words recur.
 */
export function bestSentences(markdown: string, terms: readonly string[], count: number): string[] {
  const all = sentences(markdown);
  const scored = all.map((text, index) => ({ text, index, score: termHits(text, terms) }));
  if (terms.length > 0 && scored.some((s) => s.score > 0)) {
    return pickInOrder(
      scored.filter((s) => s.score > 0),
      count,
    );
  }
  return mostInformative(all, "", count);
}

function pickInOrder(scored: { text: string; index: number; score: number }[], count: number): string[] {
  return [...scored]
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, count)
    .sort((a, b) => a.index - b.index)
    .map((s) => s.text);
}
