/**
 * Small, deterministic text analysis for the `local` model: words, stems, sentences, sections.
 * No weights, no dictionaries beyond a stop-word list: the same text always gives the same result.
 */

const STOP_WORDS = new Set(
  (
    "a about above after again all am an and any are as at be because been before being below between both but by " +
    "can could did do does doing down during each few for from further had has have having he her here hers herself " +
    "him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once " +
    "only or other our ours ourselves out over own same she should so some such than that the their theirs them " +
    "themselves then there these they this those through to too under until up very was we were what when where " +
    "which while who whom why will with would you your yours yourself yourselves please tell show give find " +
    "anything something know let lets say said notes note"
  ).split(" "),
);

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
  return [...new Set(words(text).filter((w) => !STOP_WORDS.has(w)))];
}

/** The stems that carry meaning in a request: stop words dropped, order kept, no repeats. */
export function keyTerms(text: string): string[] {
  return [
    ...new Set(
      words(text)
        .filter((w) => !STOP_WORDS.has(w))
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
  return markdown
    .split(/\n+/)
    .filter((line) => !/^\s{0,3}#{1,6}\s/.test(line))
    .map((line) => line.replace(/^\s*([-*+]\s+(\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*)/, "").trim())
    .filter((line) => line.length > 0)
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=[\p{Lu}\p{N}])/u))
    .map((s) => s.replace(/[*_`]+/g, "").trim())
    .filter((s) => s.length > 0);
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
  return extractiveSummary(all, count);
}

/** Classic frequency-based extraction: sentences whose words recur most across the text. */
export function extractiveSummary(all: readonly string[], count: number): string[] {
  const frequency = new Map<string, number>();
  for (const sentence of all) for (const term of keyTerms(sentence)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const scored = all.map((text, index) => {
    const terms = keyTerms(text);
    const weight = terms.reduce((sum, term) => sum + (frequency.get(term) ?? 0), 0);
    // Normalise by length so long sentences don't always win; the first sentence gets a small lead.
    return { text, index, score: weight / Math.sqrt(terms.length + 1) + (index === 0 ? 0.5 : 0) };
  });
  return pickInOrder(scored, count);
}

function pickInOrder(scored: { text: string; index: number; score: number }[], count: number): string[] {
  return [...scored]
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, count)
    .sort((a, b) => a.index - b.index)
    .map((s) => s.text);
}

/** Cuts a text at a word boundary. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
