/**
 * Section-aware snippets. The index marks every token of a note's text that matched the query
 * (SQLite's highlight(), PostgreSQL's ts_headline(): both stem as they indexed, so "goals" marks
 * "goal" too); this module picks the section (a heading and the lines under it, or the lines
 * before the first heading) holding the most distinct matched words, and shows that section,
 * headed by its heading, cut to a short plain-text line.
 */

/** Put around each matched token by the queries; control characters no note shows. */
export const MARK_START = "\u0002";
export const MARK_END = "\u0003";
const MARKS = /[\u0002\u0003]/g;
const MARKED = /\u0002([^\u0002\u0003]*)\u0003/g;

/** The longest snippet, in characters (about 30 words). */
export const SNIPPET_CHARS = 200;
const HEADING_CHARS = 60;
/** Lines of a section are joined with this, so a snippet is one line. */
const LINE_JOINER = " · ";

interface Section {
  heading: string | null;
  lines: string[];
}

/** Surrounds every occurrence of each symbol (emoji, which no index tokenises) with marks. */
export function markSymbols(text: string, symbols: readonly string[]): string {
  let marked = text;
  for (const symbol of symbols) marked = marked.split(symbol).join(`${MARK_START}${symbol}${MARK_END}`);
  return marked;
}

/** Splits marked text into sections at the note's heading lines, which appear in it in order. */
function sections(marked: string, headings: readonly string[]): Section[] {
  const found: Section[] = [{ heading: null, lines: [] }];
  let next = 0;
  for (const line of marked.split("\n")) {
    const heading = headings[next];
    if (heading !== undefined && line.replace(MARKS, "").trim() === heading.trim()) {
      found.push({ heading: line, lines: [] });
      next++;
    } else {
      (found[found.length - 1] as Section).lines.push(line);
    }
  }
  return found;
}

function markedWords(text: string): string[] {
  return [...text.matchAll(MARKED)].map((match) => (match[1] ?? "").toLowerCase());
}

/** Distinct matched words count most, those in the heading twice; then how often they occur. */
function sectionScore(section: Section): number {
  const inHeading = markedWords(section.heading ?? "");
  const all = [...inHeading, ...section.lines.flatMap(markedWords)];
  return new Set(all).size + new Set(inHeading).size + Math.min(all.length, 50) / 100;
}

const clean = (text: string) => text.replace(MARKS, "").replace(/\s+/g, " ").trim();

/** At most `max` characters of `text`, starting a little before `focus` (an index in it), cut at spaces. */
function window(text: string, focus: number, max: number): string {
  if (text.length <= max) return text;
  let start = Math.max(0, Math.min(focus - Math.floor(max / 4), text.length - max));
  if (start > 0) start = text.indexOf(" ", start) + 1 || start;
  let end = start + max - 2;
  if (end < text.length) end = text.lastIndexOf(" ", end) > start ? text.lastIndexOf(" ", end) : end;
  return `${start > 0 ? "…" : ""}${text.slice(start, end).trim()}${end < text.length ? "…" : ""}`;
}

/**
 * A snippet of a note from its text with the query's matches marked and its heading lines: the
 * best-matching section (the first one with text when nothing is marked, as for a note found by
 * its title or by meaning), at most {@link SNIPPET_CHARS} characters.
 */
export function buildSnippet(marked: string, headings: readonly string[]): string {
  const all = sections(marked, headings).filter((s) => s.heading !== null || s.lines.some((line) => line.trim() !== ""));
  let best: Section | undefined;
  let bestScore = 0;
  for (const section of all) {
    const score = sectionScore(section);
    if (score > bestScore) [best, bestScore] = [section, score];
  }
  best ??= all[0];
  if (!best) return "";
  const heading = best.heading === null ? "" : window(clean(best.heading), 0, HEADING_CHARS);
  // The body keeps its marks until the window is chosen around the first of them.
  const body = best.lines
    .map((line) => line.replace(/\s+/g, " ").trim())
    .filter((line) => line !== "")
    .join(LINE_JOINER);
  const budget = SNIPPET_CHARS - (heading ? heading.length + 3 : 0);
  const focus = Math.max(0, body.indexOf(MARK_START));
  const plainFocus = body.slice(0, focus).replace(MARKS, "").length;
  const text = window(body.replace(MARKS, ""), plainFocus, budget);
  if (!heading) return text;
  return text ? `${heading} — ${text}` : heading;
}
