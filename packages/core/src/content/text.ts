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
 * Words, counted the same on every Node version. A run of letters, digits and combining marks is
 * one word, including inner joiners so that "don't", "e-mail", "3.14", "1,000", "10:30" and
 * "snake_case" count once; each Chinese or Japanese character is one word, as word processors
 * count them. Intl.Segmenter would split CJK by dictionary instead, but its counts change with the
 * ICU bundled in Node, and stored counts should not drift after an upgrade.
 */
const CJK = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}";
const LETTER = `(?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])`;
const WORD = new RegExp(`[${CJK}]|${LETTER}+(?:['’.,:_-]${LETTER}+)*`, "gu");

export function countWords(text: string): number {
  let count = 0;
  for (const _ of text.matchAll(WORD)) count++;
  return count;
}
