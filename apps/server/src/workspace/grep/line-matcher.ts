/**
 * Finds matching lines in texts. Shared by the in-process literal path and the regex worker, so
 * both answer exactly the same shape, within the same bounds.
 */
export interface GrepOptions {
  pattern: string;
  mode: "literal" | "regex";
  caseSensitive: boolean;
  contextBefore: number;
  contextAfter: number;
  /** Stop collecting a note's matches after this many. */
  maxMatchesPerNote: number;
  /** Longer lines (matched or context) are cut to this many characters, around the match. */
  maxLineChars: number;
  /** Stop collecting matches once the answer's lines add up to about this many characters. */
  maxAnswerChars: number;
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

/** Why an answer holds less than every matching line in full. */
export type Truncation = "matchesPerNote" | "lineLength" | "answerSize";

export interface GrepResult {
  /** Each text's matches, in the order of the texts. */
  perNote: LineMatch[][];
  truncatedBy: Truncation[];
}

/** Where a line matches: the matched text and the index it starts at. */
export type Matcher = (line: string) => { index: number; text: string } | null;

/** What a match costs the answer beyond its lines' characters: its keys and punctuation as JSON. */
const MATCH_OVERHEAD_CHARS = 64;
const LINE_OVERHEAD_CHARS = 3;

export function buildMatcher(options: Pick<GrepOptions, "pattern" | "mode" | "caseSensitive">): Matcher {
  if (options.mode === "regex") {
    const regex = new RegExp(options.pattern, options.caseSensitive ? "u" : "iu");
    return (line) => {
      const found = regex.exec(line);
      return found ? { index: found.index, text: found[0] } : null;
    };
  }
  const needle = options.caseSensitive ? options.pattern : options.pattern.toLowerCase();
  return (line) => {
    const haystack = options.caseSensitive ? line : line.toLowerCase();
    const at = haystack.indexOf(needle);
    // Lower-casing can change lengths for a few characters; slice the original by the needle's length.
    return at < 0 ? null : { index: at, text: line.slice(at, at + options.pattern.length) };
  };
}

/** `line` cut to `max` characters, keeping `[index, index + length)` (a match) in view, centred. */
function clip(line: string, max: number, index = 0, length = 0): string {
  if (line.length <= max) return line;
  const start = Math.min(Math.max(0, index - Math.floor((max - Math.min(length, max)) / 2)), line.length - max);
  return line.slice(start, start + max);
}

const linesChars = (lines: string[]) => lines.reduce((sum, line) => sum + line.length + LINE_OVERHEAD_CHARS, 0);

/**
 * Each text's matching lines with their context, within the options' bounds: at most
 * `maxMatchesPerNote` per text, lines cut to `maxLineChars`, and no more matches once the lines
 * collected reach `maxAnswerChars` (texts after that get none). `truncatedBy` says which bounds cut.
 */
export function grepTexts(texts: readonly string[], matcher: Matcher, options: GrepOptions): GrepResult {
  const truncatedBy = new Set<Truncation>();
  const max = options.maxLineChars;
  const clipContext = (lines: string[]) =>
    lines.map((line) => {
      if (line.length > max) truncatedBy.add("lineLength");
      return clip(line, max);
    });
  let budget = options.maxAnswerChars;
  const perNote: LineMatch[][] = texts.map(() => []);
  notes: for (const [noteIndex, text] of texts.entries()) {
    const matches = perNote[noteIndex] as LineMatch[];
    const lines = text.split("\n");
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index] as string;
      const found = matcher(line);
      if (found === null) continue;
      if (matches.length >= options.maxMatchesPerNote) {
        truncatedBy.add("matchesPerNote");
        break;
      }
      if (line.length > max || found.text.length > max) truncatedBy.add("lineLength");
      const match: LineMatch = {
        line: index + 1,
        text: clip(line, max, found.index, found.text.length),
        match: found.text.slice(0, max),
        before: clipContext(lines.slice(Math.max(0, index - options.contextBefore), index)),
        after: clipContext(lines.slice(index + 1, index + 1 + options.contextAfter)),
      };
      const cost = MATCH_OVERHEAD_CHARS + match.text.length + match.match.length + linesChars(match.before) + linesChars(match.after);
      if (cost > budget) {
        truncatedBy.add("answerSize");
        break notes;
      }
      budget -= cost;
      matches.push(match);
    }
  }
  return { perNote, truncatedBy: [...truncatedBy] };
}
