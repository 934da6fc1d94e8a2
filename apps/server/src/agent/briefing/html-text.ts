import { escapeHtml } from "../../http/escape-html";

/**
 * HTML from clients and models, read as text without ever being rendered: a linear scan (no
 * backtracking regex over the whole input), tags reduced to their names, the content of script,
 * style and similar elements dropped, comments and declarations skipped.
 */

type Token = { kind: "text"; text: string } | { kind: "open" | "close"; name: string };

/** Elements whose content is never text a person reads. */
const OPAQUE = new Set(["script", "style", "template", "iframe", "noscript", "textarea", "title", "object", "svg", "math"]);

/** Elements that end a line of text. */
const BLOCKS = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "br",
  "dd",
  "div",
  "dl",
  "dt",
  "figcaption",
  "footer",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hr",
  "li",
  "main",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "td",
  "th",
  "tr",
  "ul",
]);

/** The end of the tag opened at `start` (the index of its `>`), skipping quoted attribute values; -1 if none. */
function tagEnd(html: string, start: number): number {
  let quote = "";
  for (let i = start + 1; i < html.length; i++) {
    const c = html[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ">") return i;
  }
  return -1;
}

/** Whether the `<` at `at` starts markup: a tag, an end tag, a comment or a declaration. A lone `<` (as in "a < b") is text. */
function startsMarkup(html: string, at: number): boolean {
  const next = html.charCodeAt(at + 1);
  const letter = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  return letter(next) || next === 33 /* ! */ || next === 63 /* ? */ || (next === 47 /* / */ && letter(html.charCodeAt(at + 2)));
}

function* tokens(html: string): Generator<Token> {
  let i = 0;
  while (i < html.length) {
    let lt = html.indexOf("<", i);
    while (lt >= 0 && !startsMarkup(html, lt)) lt = html.indexOf("<", lt + 1);
    if (lt < 0) {
      yield { kind: "text", text: html.slice(i) };
      return;
    }
    if (lt > i) yield { kind: "text", text: html.slice(i, lt) };
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      if (end < 0) return;
      i = end + 3;
      continue;
    }
    const end = tagEnd(html, lt);
    // An unterminated tag swallows the rest, as a browser would.
    if (end < 0) return;
    i = end + 1;
    const name = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(lt, lt + 64));
    // Declarations and processing instructions (<!doctype>, <?xml?>) carry no text.
    if (!name) continue;
    const tag = (name[2] as string).toLowerCase();
    if (name[1]) {
      yield { kind: "close", name: tag };
      continue;
    }
    yield { kind: "open", name: tag };
    // `<script/>` still opens a script in HTML; only foreign elements (svg, math) close themselves.
    const selfClosed = html[end - 1] === "/" && (tag === "svg" || tag === "math");
    if (OPAQUE.has(tag) && !selfClosed) {
      const closing = new RegExp(`</${tag}\\b`, "gi");
      closing.lastIndex = i;
      const found = closing.exec(html);
      if (!found) return;
      i = found.index;
    }
  }
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  mdash: "—",
  ndash: "–",
  hellip: "…",
  middot: "·",
  bull: "•",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
};

/** Character references decoded; unknown names stay as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/g, (whole, ref: string) => {
    if (ref[0] !== "#") return NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
    const code = ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : "\uFFFD";
  });
}

/** A line of an HTML text, and whether it was a list item. */
export interface TextBlock {
  text: string;
  listItem: boolean;
}

/** The text of `html`, one block per paragraph, heading, list item, table cell or line break. */
export function htmlBlocks(html: string): TextBlock[] {
  const blocks: TextBlock[] = [];
  let current = "";
  let inListItem = false;
  const flush = () => {
    const text = decodeEntities(current).replace(/\s+/g, " ").trim();
    if (text) blocks.push({ text, listItem: inListItem });
    current = "";
  };
  for (const token of tokens(html)) {
    if (token.kind === "text") current += token.text;
    else if (BLOCKS.has(token.name)) {
      flush();
      if (token.name === "li") inListItem = token.kind === "open";
    } else current += " ";
  }
  flush();
  return blocks;
}

/**
 * What a summary may keep of HTML written elsewhere: structure and emphasis, never attributes.
 * `time` holds an instant as its text (`<time>ISO</time>`), which readers show relative to now.
 */
const ALLOWED = new Set(["p", "br", "ul", "ol", "li", "strong", "em", "b", "i", "h3", "h4", "code", "time"]);

/**
 * HTML reduced to {@link ALLOWED} elements without attributes, its text re-escaped: nothing in
 * it can run a script, load anything or style the page, whatever it was given.
 */
export function sanitiseHtml(html: string): string {
  let out = "";
  for (const token of tokens(html)) {
    if (token.kind === "text") out += escapeHtml(decodeEntities(token.text));
    else if (ALLOWED.has(token.name)) out += token.kind === "open" ? `<${token.name}>` : token.name === "br" ? "" : `</${token.name}>`;
  }
  return out;
}
