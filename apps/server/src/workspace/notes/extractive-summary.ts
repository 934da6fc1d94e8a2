/**
 * Extractive summaries: the sentences of a note that carry its most frequent words (and its
 * title's), in their original order. No model, so the same note always gives the same summary.
 */

import { STOP_WORDS } from "../text/stop-words";

/** Sentences found in one text at most: enough for any note a person reads, bounded for huge ones. */
const MAX_SENTENCES = 2000;
/** Sentences this short (in words) are mostly headings or greetings: they count half. */
const SHORT_SENTENCE_WORDS = 4;
const TITLE_WEIGHT = 2;

/**
 * A text's sentences: every line on its own (a note's text is one line per block), each split
 * after `.`, `!`, `?` or `…` where the next sentence starts with a capital, a digit or a quote.
 */
export function splitSentences(text: string, max = MAX_SENTENCES): string[] {
  const sentences: string[] = [];
  for (const line of text.split(/\n+/)) {
    const trimmed = line.replace(/\s+/g, " ").trim();
    if (!trimmed) continue;
    for (const sentence of trimmed.split(/(?<=[.!?…])\s+(?=[\p{Lu}\p{N}"'“‘([])/u)) {
      sentences.push(sentence);
      if (sentences.length >= max) return sentences;
    }
  }
  return sentences;
}

/** A word's content term: lower case, a plural `s` dropped; stop words and short words are none. */
function terms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words
    .filter((word) => word.length >= 3 && !STOP_WORDS.has(word))
    .map((word) => (word.length > 4 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word));
}

/** At most `max` characters, cut at a word boundary where one is near, with an ellipsis. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export interface SummaryOptions {
  /** How many sentences to keep. */
  sentences: number;
  /** The longest summary, in characters. */
  maxChars: number;
}

/**
 * The `keep` most informative of `sentences`, in their order. A sentence scores the frequency of
 * its terms across the text (a term said once counts nothing; a title term counts extra), divided
 * by the square root of its length so long sentences do not win by length alone. Ties go to the
 * earlier sentence.
 */
export function mostInformative(sentences: readonly string[], title: string, keep: number): string[] {
  if (sentences.length <= keep) return [...sentences];
  const sentenceTerms = sentences.map(terms);
  const frequency = new Map<string, number>();
  for (const list of sentenceTerms) for (const term of list) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const titleTerms = new Set(terms(title));
  const scored = sentenceTerms.map((list, index) => {
    const distinct = new Set(list);
    let weight = 0;
    for (const term of distinct) weight += (frequency.get(term) ?? 1) - 1 + (titleTerms.has(term) ? TITLE_WEIGHT : 0);
    const words = (sentences[index] as string).split(" ").length;
    const score = (list.length ? weight / Math.sqrt(list.length) : 0) * (words < SHORT_SENTENCE_WORDS ? 0.5 : 1);
    return { index, score };
  });
  return scored
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, keep)
    .map((s) => s.index)
    .sort((a, b) => a - b)
    .map((index) => sentences[index] as string);
}

/**
 * Whether a line reads as a sentence: long enough, or ending like one. A heading or a label
 * ("Kickoff", "Next steps") names a part of a note; it does not say what the note says.
 */
function readsAsSentence(line: string): boolean {
  return line.split(" ").length >= SHORT_SENTENCE_WORDS || /[.!?…]["'”’)\]]*$/.test(line);
}

/**
 * The `sentences` most informative sentences of `text`, in their order, within `maxChars`: chosen
 * among the lines that read as sentences, or among all of them in a note that has none.
 */
export function extractiveSummary(title: string, text: string, { sentences: keep, maxChars }: SummaryOptions): string {
  const lines = splitSentences(text);
  const sentences = lines.filter(readsAsSentence);
  return clip(mostInformative(sentences.length > 0 ? sentences : lines, title, keep).join(" "), maxChars);
}
