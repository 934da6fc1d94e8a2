/**
 * Finds matching lines in texts. Shared by the in-process literal path and the regex worker, so
 * both answer exactly the same shape.
 */
export interface GrepOptions {
  pattern: string;
  mode: "literal" | "regex";
  caseSensitive: boolean;
  contextBefore: number;
  contextAfter: number;
  /** Stop collecting a note's matches after this many. */
  maxMatchesPerNote: number;
}

export interface LineMatch {
  /** 1-based line number. */
  line: number;
  text: string;
  /** The matched part of the line. */
  match: string;
  before: string[];
  after: string[];
}

export type Matcher = (line: string) => string | null;

export function buildMatcher(options: Pick<GrepOptions, "pattern" | "mode" | "caseSensitive">): Matcher {
  if (options.mode === "regex") {
    const regex = new RegExp(options.pattern, options.caseSensitive ? "u" : "iu");
    return (line) => regex.exec(line)?.[0] ?? null;
  }
  const needle = options.caseSensitive ? options.pattern : options.pattern.toLowerCase();
  return (line) => {
    const haystack = options.caseSensitive ? line : line.toLowerCase();
    const at = haystack.indexOf(needle);
    // Lower-casing can change lengths for a few characters; slice the original by the needle's length.
    return at < 0 ? null : line.slice(at, at + options.pattern.length);
  };
}

export function grepText(text: string, matcher: Matcher, options: GrepOptions): LineMatch[] {
  const lines = text.split("\n");
  const matches: LineMatch[] = [];
  for (let index = 0; index < lines.length && matches.length < options.maxMatchesPerNote; index++) {
    const line = lines[index] as string;
    const match = matcher(line);
    if (match === null) continue;
    matches.push({
      line: index + 1,
      text: line,
      match,
      before: lines.slice(Math.max(0, index - options.contextBefore), index),
      after: lines.slice(index + 1, index + 1 + options.contextAfter),
    });
  }
  return matches;
}
