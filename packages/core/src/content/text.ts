import type { JSONContent } from "@tiptap/core";
import type { Node as PMNode } from "@tiptap/pm/model";
import { normalizeJson, toNoteNode } from "./normalize";

/**
 * Each line becomes a paragraph, taken literally (no Markdown). Lines end at \n, \r\n or \r, and a
 * final line break ends the last line rather than starting an empty one, as in a text file.
 */
export function textToJson(text: string): JSONContent {
  const lines = text.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n");
  return normalizeJson({
    type: "doc",
    content: lines.map((line) => ({ type: "paragraph", content: line === "" ? [] : [{ type: "text", text: line }] })),
  });
}

/**
 * Run a parser that recurses once per nesting level. Input nested deeper than the stack allows
 * (around 350 levels of Markdown lists or 1,000 of HTML lists; never real notes) is kept as
 * literal text, so nothing is lost and the result is still a valid, safe document.
 */
export function parseOrLiteral(source: string, parse: (source: string) => JSONContent): JSONContent {
  try {
    return parse(source);
  } catch (error) {
    if (error instanceof RangeError && error.message.includes("call stack")) return textToJson(source);
    throw error;
  }
}

/**
 * Plain text for grep and search: every textblock (paragraph, heading, list item line, code
 * block…) on its own line(s), hard breaks as newlines, no markup or list markers. Blocks without
 * text, like horizontal rules, produce nothing. textToJson and jsonToText round trip.
 */
export function jsonToText(json: JSONContent): string {
  return textLines(toNoteNode(json)).join("\n");
}

function textLines(node: PMNode): string[] {
  if (node.isTextblock) {
    let line = "";
    node.forEach((child) => {
      if (child.isText) line += child.text;
      else if (child.type.name === "hardBreak") line += "\n";
    });
    return [line];
  }
  const lines: string[] = [];
  node.forEach((child) => {
    lines.push(...textLines(child));
  });
  return lines;
}

/**
 * The lines of every heading, in document order, as jsonToText writes them: search weighs
 * these words above the body's, and cuts snippets at the sections they open.
 */
export function jsonHeadings(json: JSONContent): string[] {
  const headings: string[] = [];
  toNoteNode(json).descendants((node) => {
    // A hard break splits a heading over two lines of the text; each is a heading line.
    if (node.type.name === "heading") headings.push(...textLines(node).flatMap((line) => line.split("\n")));
    return !node.isTextblock;
  });
  return headings;
}

const IS_CJK = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]$/u;
const IS_LETTER = /^[\p{L}\p{N}\p{M}]$/u;
const JOINERS = "'’.,:_-";

const OTHER = 1;
const LETTER = 2;
const CJK = 3;
const JOINER = 4;

/** Each BMP character's kind, filled in as characters are met (0: not classified yet). */
const BMP_KINDS = new Uint8Array(0x10000);

function kindOf(char: string): number {
  const code = char.codePointAt(0) as number;
  const known = code < 0x10000 ? (BMP_KINDS[code] as number) : 0;
  if (known) return known;
  const kind = IS_CJK.test(char) ? CJK : IS_LETTER.test(char) ? LETTER : JOINERS.includes(char) ? JOINER : OTHER;
  if (code < 0x10000) BMP_KINDS[code] = kind;
  return kind;
}

/**
 * Words, counted the same on every Node version. A run of letters, digits and combining marks is
 * one word, including inner joiners so that "don't", "e-mail", "3.14", "1,000", "10:30" and
 * "snake_case" count once; each Chinese or Japanese character is one word, as word processors
 * count them. Intl.Segmenter would split CJK by dictionary instead, but its counts change with the
 * ICU bundled in Node, and stored counts should not drift after an upgrade. One scan, character by
 * character: a regular expression for the same rule runs out of stack on a single word millions
 * of characters long (V8 backtracks per character of a Unicode class).
 */
export function countWords(text: string): number {
  let count = 0;
  // Outside a word; inside one; right after a joiner that follows a word.
  let state: "none" | "word" | "joiner" = "none";
  for (const char of text) {
    const kind = kindOf(char);
    if (kind === LETTER) {
      if (state === "none") count++;
      state = "word";
    } else if (kind === JOINER && state === "word") {
      state = "joiner";
    } else {
      if (kind === CJK) count++;
      state = "none";
    }
  }
  return count;
}
