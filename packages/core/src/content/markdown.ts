import { Extension, type JSONContent, type MarkdownToken } from "@tiptap/core";
import { MarkdownManager } from "@tiptap/markdown";
import { Marked, type marked } from "marked";
import { normalizeJson } from "./normalize";
import { noteExtensions } from "./schema";
import { parseOrLiteral } from "./text";

/**
 * Markdown goes through @tiptap/markdown's MarkdownManager in both directions, built from the note
 * extensions, so each extension's own Markdown rules apply: task lists (`- [ ]`, `- [x]`), code
 * block languages and underline (`<u>…</u>`) round trip without a serializer of our own. Two gaps
 * are filled here (tables, text that looks like block syntax) and everything is normalised.
 *
 * Raw HTML inside Markdown stays literal text (`<b>x</b>` reads as those characters): the manager
 * only parses embedded HTML when a global `window` exists, which the server deliberately lacks.
 * That is safe, and such text is escaped again on output. Images keep only their alt text, as the
 * schema has no image node. Bare URLs become links, as in GitHub-flavoured Markdown.
 *
 * Cost grows with nesting times size: marked re-reads the content of each quote and list item
 * once per level, so 200 nested quotes around 10 MB of text take about 35 s and 3 GB. Real notes
 * are nowhere near that; request size limits keep hostile ones out.
 */

/**
 * The schema has no tables, and MarkdownManager drops tokens nothing handles, so a pasted GFM
 * table would vanish. Each row becomes a paragraph instead, cells (with their formatting) joined
 * by " | ": all text and links are kept, and the result is stable under further round trips.
 */
const TableRowsAsParagraphs = Extension.create({
  name: "markdownTableRows",
  markdownTokenName: "table",
  parseMarkdown: (token, h) =>
    [token.header, ...token.rows].map((cells: MarkdownToken[]) =>
      h.createNode(
        "paragraph",
        {},
        cells.flatMap((cell, i) => [...(i > 0 ? [h.createTextNode(" | ")] : []), ...h.parseInline(cell.tokens ?? [])]),
      ),
    ),
});

/**
 * MarkdownManager escapes inline syntax in text (`*`, `_`, `` ` ``, `[`…) but not what starts a
 * block, so a paragraph reading "# not a heading" or "1. not a list" would come back as a heading
 * or a list. Every line a paragraph renders is checked here, before list or quote prefixes are
 * added. A backslash before ASCII punctuation is always a literal in CommonMark, and a leading
 * space or tab (which Markdown would strip, or read as an indented code block) becomes a
 * character reference.
 */
class NoteMarkdownManager extends MarkdownManager {
  override renderNodeToMarkdown(node: JSONContent, ...rest: [JSONContent?, number?, number?, Record<string, unknown>?]): string {
    const markdown = super.renderNodeToMarkdown(node, ...rest);
    return node.type === "paragraph" ? markdown.split("\n").map(escapeLineStart).join("\n") : markdown;
  }
}

function escapeLineStart(line: string): string {
  if (line.startsWith(" ")) return `&#32;${line.slice(1)}`;
  if (line.startsWith("\t")) return `&#9;${line.slice(1)}`;
  // A block quote (text is not HTML-escaped, so a > reaches the line start as itself).
  if (line.startsWith(">")) return `\\${line}`;
  // An ATX heading, a bullet, or a setext underline / thematic break made of = or -.
  if (/^(?:#{1,6}(?=[ \t]|$)|[-+](?=[ \t]|$)|=+[ \t]*$|-+[ \t]*$)/.test(line)) return `\\${line}`;
  // An ordered list item: escape its delimiter.
  if (/^\d{1,9}[.)](?=[ \t]|$)/.test(line)) return line.replace(/[.)]/, "\\$&");
  // A table delimiter row ("| --- | :-: |"): a cell holding "\-" no longer qualifies.
  if (/^[|:\- \t]*$/.test(line) && line.includes("|") && line.includes("-")) return line.replace("-", "\\-");
  return line;
}

/**
 * Text as written. MarkdownManager HTML-escapes every `&`, `<` and `>` in text ("Wilson &amp;
 * Partners", "&lt;$200"), which people and agents reading the Markdown see literally. Only what
 * Markdown itself would read differently is escaped here, with backslashes: inline delimiters (as
 * the manager does), an `&` that would start a character reference, and a `<` that would start a
 * tag, comment or autolink. A `>` matters only at a line start ({@link escapeLineStart}). Text in
 * code (a code mark or a code block) stays raw, as the manager leaves it.
 */
function encodeText(text: string): string {
  return text
    .replace(/[\\`*_[\]~]/g, "\\$&")
    .replace(/&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{0,31};)/g, "\\&")
    .replace(/<(?=[A-Za-z/!?])/g, "\\<");
}

/** The manager's own rule for which text is code (its `codeTypes` set: the code mark and code block). */
type TextEncoding = { codeTypes: ReadonlySet<string> };

function isCodeText(manager: TextEncoding, node: JSONContent, parent: JSONContent | undefined): boolean {
  if (parent?.type !== undefined && manager.codeTypes.has(parent.type)) return true;
  return (node.marks ?? []).some((mark) => manager.codeTypes.has(typeof mark === "string" ? mark : mark.type));
}

// The manager's text encoder is private in its typings, so it is replaced on the prototype; the check
// on `codeTypes` makes a library upgrade that renames either fail at load rather than silently.
Object.defineProperty(NoteMarkdownManager.prototype, "encodeTextForMarkdown", {
  value(this: TextEncoding, text: string, node: JSONContent, parent?: JSONContent): string {
    if (!(this.codeTypes instanceof Set)) throw new Error("@tiptap/markdown: MarkdownManager.codeTypes is gone");
    return isCodeText(this, node, parent) ? text : encodeText(text);
  },
});

/**
 * The manager registers its custom tokenizers with `marked.use()`. By default that is marked's
 * process-wide singleton, which would then produce tokens (taskList…) that other users of
 * `marked` can't render, so it gets a private instance. MarkdownManager only uses the instance
 * API (`Lexer`, `defaults`, `use`, `lexer`, `setOptions`), which `Marked` objects provide; its
 * option is typed as the singleton only because that is the default.
 */
const manager = new NoteMarkdownManager({
  extensions: [...noteExtensions, TableRowsAsParagraphs],
  marked: new Marked() as unknown as typeof marked,
});

export function markdownToJson(markdown: string): JSONContent {
  return parseOrLiteral(markdown, (source) => normalizeJson(manager.parse(source)));
}

export function jsonToMarkdown(json: JSONContent): string {
  return manager.serialize(normalizeJson(json));
}
