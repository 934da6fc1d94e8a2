import { type Block, type Inline, safeHref } from "./rich-model";

/**
 * The Markdown the agent writes, read into {@link Block}s: paragraphs (a line break is kept as
 * one), ATX headings, bullet and numbered lists (nested by indentation), quotes, fenced code,
 * GitHub tables and rules; inline bold, italic, strikethrough, code, links and bare web addresses.
 * Anything else stays text, raw HTML included (`<b>` reads as those characters), and an image
 * keeps only its alt text, so nothing is loaded from anywhere. It reads half-written Markdown
 * sensibly, as a streamed answer is re-read as it grows: an unclosed `**` is just text, an
 * unclosed fence is code to the end.
 */
export function parseMarkdown(source: string): Block[] {
  return parseBlocks(source.replace(/\r\n?/g, "\n").split("\n"), 0);
}

/** Quotes and lists nest; past this depth the rest is read as plain paragraphs (no hostile recursion). */
const MAX_DEPTH = 12;

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+|$)(.*)$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;

const blank = (line: string) => line.trim() === "";
const indentOf = (line: string) => line.length - line.trimStart().length;

/** A table's second line: `| --- | :-: |`, cells of dashes with optional alignment colons. */
function isTableDelimiter(line: string): boolean {
  const trimmed = line.trim();
  if (!trimmed.includes("|")) return false;
  return trimmed
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split("|")
    .every((cell) => /^\s*:?-+:?\s*$/.test(cell));
}

/** Whether `line` starts a block other than a paragraph (and so ends a paragraph before it). */
function startsBlock(line: string): boolean {
  if (FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line)) return true;
  const item = itemOf(line);
  // As in CommonMark, a numbered list interrupts a paragraph only when it starts at 1.
  return item !== null && item.text.trim() !== "" && (!item.ordered || /^1[.)]$/.test(item.marker));
}

function parseBlocks(lines: readonly string[], depth: number): Block[] {
  const blocks: Block[] = [];
  const lineAt = (index: number) => lines[index] ?? "";
  let i = 0;
  while (i < lines.length) {
    const line = lineAt(i);
    if (blank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const closing = new RegExp(`^ {0,3}${marker.startsWith("`") ? "`" : "~"}{${marker.length},}[ \\t]*$`);
      const body: string[] = [];
      i++;
      while (i < lines.length && !closing.test(lineAt(i))) {
        body.push(lineAt(i));
        i++;
      }
      i++; // the closing fence, if there was one
      blocks.push({ kind: "code", text: body.join("\n") });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const text = (heading[2] ?? "").replace(/[ \t]+#+[ \t]*$/, "").trim();
      blocks.push({ kind: "heading", level: (heading[1] ?? "#").length, children: parseInline(text) });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      blocks.push({ kind: "rule" });
      i++;
      continue;
    }
    if (depth < MAX_DEPTH && QUOTE.test(line)) {
      const body: string[] = [];
      for (let quoted = QUOTE.exec(line); quoted; quoted = QUOTE.exec(lineAt(i))) {
        body.push(quoted[1] ?? "");
        i++;
        if (i >= lines.length) break;
      }
      blocks.push({ kind: "quote", children: parseBlocks(body, depth + 1) });
      continue;
    }
    if (depth < MAX_DEPTH && ITEM.test(line)) {
      const list = parseList(lines, i, depth);
      blocks.push(list.block);
      i = list.next;
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && isTableDelimiter(lineAt(i + 1))) {
      const rows: string[] = [];
      let j = i + 2;
      while (j < lines.length && !blank(lineAt(j)) && lineAt(j).includes("|")) {
        rows.push(lineAt(j));
        j++;
      }
      blocks.push({ kind: "table", header: tableCells(line), rows: rows.map(tableCells) });
      i = j;
      continue;
    }
    const paragraph = [line.trim()];
    i++;
    while (i < lines.length && !blank(lineAt(i)) && !startsBlock(lineAt(i))) {
      paragraph.push(lineAt(i).trim());
      i++;
    }
    blocks.push({ kind: "paragraph", children: parseInline(paragraph.join("\n")) });
  }
  return blocks;
}

/** An item line's parts: its indentation, its marker, the space after it, its text. */
function itemOf(line: string): { indent: number; marker: string; ordered: boolean; gap: number; text: string } | null {
  const item = ITEM.exec(line);
  if (!item) return null;
  const marker = item[2] ?? "-";
  return { indent: (item[1] ?? "").length, marker, ordered: /\d/.test(marker), gap: (item[3] ?? " ").length, text: item[4] ?? "" };
}

function parseList(lines: readonly string[], start: number, depth: number): { block: Block; next: number } {
  const lineAt = (index: number) => lines[index] ?? "";
  const first = itemOf(lineAt(start));
  const ordered = first?.ordered ?? false;
  const firstIndent = first?.indent ?? 0;
  const items: Block[][] = [];
  let i = start;
  while (i < lines.length) {
    const item = itemOf(lineAt(i));
    if (!item || item.ordered !== ordered || RULE.test(lineAt(i)) || item.indent > firstIndent + 3) break;
    const markerIndent = item.indent;
    // Continuation lines are indented to where the item's text starts.
    const contentIndent = markerIndent + item.marker.length + Math.min(item.gap, 4);
    const body = [item.text];
    i++;
    while (i < lines.length) {
      const line = lineAt(i);
      if (blank(line)) {
        let j = i + 1;
        while (j < lines.length && blank(lineAt(j))) j++;
        if (j < lines.length && indentOf(lineAt(j)) >= contentIndent) {
          for (let k = i; k < j; k++) body.push("");
          i = j;
          continue;
        }
        break;
      }
      const indent = indentOf(line);
      if (indent >= contentIndent) body.push(line.slice(contentIndent));
      // A deeper item than this one's marker nests, even when its indentation falls short.
      else if (ITEM.test(line) && indent > markerIndent) body.push(line.slice(indent));
      else if (!startsBlock(line) && !ITEM.test(line)) body.push(line.trim());
      else break;
      i++;
    }
    items.push(parseBlocks(body, depth + 1));
    // Blank lines between items of the same list.
    let j = i;
    while (j < lines.length && blank(lineAt(j))) j++;
    const next = j < lines.length ? itemOf(lineAt(j)) : null;
    if (j > i && next && next.ordered === ordered && next.indent <= markerIndent + 3) i = j;
  }
  const startNumber = ordered ? Number.parseInt(first?.marker ?? "1", 10) : 1;
  return { block: { kind: "list", ordered, start: startNumber, items }, next: i };
}

function tableCells(line: string): Inline[][] {
  const trimmed = line
    .trim()
    .replace(/^\|/, "")
    .replace(/(?<!\\)\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((cell) => parseInline(cell.trim().replaceAll("\\|", "|")));
}

/** Inline nesting deeper than this (bold in a link in italics…) is read as text. */
const MAX_INLINE_DEPTH = 8;
/** Closing delimiters tried per opening one: keeps hostile runs of `*` linear enough. */
const MAX_CANDIDATES = 32;
const ESCAPABLE = /[!-/:-@[-`{-~]/;
const BARE_URL = /^https?:\/\/[^\s<>]+/;
const AUTOLINK = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i;
const WORD = /[\p{L}\p{N}]/u;

export function parseInline(text: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  let buffer = "";
  const flush = () => {
    if (buffer) out.push({ kind: "text", text: buffer });
    buffer = "";
  };
  const push = (...inlines: Inline[]) => {
    flush();
    out.push(...inlines);
  };
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === "\\" && i + 1 < text.length && ESCAPABLE.test(text.charAt(i + 1))) {
      buffer += text.charAt(i + 1);
      i += 2;
      continue;
    }
    if (c === "\\" && text.charAt(i + 1) === "\n") {
      push({ kind: "break" });
      i += 2;
      continue;
    }
    if (c === "\n") {
      buffer = buffer.trimEnd();
      push({ kind: "break" });
      i++;
      continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(text.slice(i, i + 64))?.[0] ?? "`";
      const close = findCodeClose(text, i + run.length, run.length);
      if (close >= 0) {
        const code = text.slice(i + run.length, close).replaceAll("\n", " ");
        push({ kind: "code", text: /^ .* $/.test(code) && code.trim() ? code.slice(1, -1) : code });
        i = close + run.length;
      } else {
        buffer += run;
        i += run.length;
      }
      continue;
    }
    if (depth < MAX_INLINE_DEPTH && (c === "[" || (c === "!" && text.charAt(i + 1) === "["))) {
      const image = c === "!";
      const link = linkAt(text, image ? i + 1 : i);
      if (link) {
        const label = parseInline(link.label, depth + 1);
        const href = safeHref(link.url);
        // Images are never fetched: their alt text stands in for them.
        if (image || !href) push(...label);
        else push({ kind: "link", href, children: label });
        i = link.end;
        continue;
      }
    }
    if (c === "<") {
      const auto = AUTOLINK.exec(text.slice(i, i + 2048));
      const href = auto && safeHref(auto[1]);
      if (auto && href) {
        push({ kind: "link", href, children: [{ kind: "text", text: auto[1] ?? "" }] });
        i += auto[0].length;
        continue;
      }
    }
    if ((c === "h" || c === "H") && (i === 0 || !WORD.test(text.charAt(i - 1)))) {
      const bare = BARE_URL.exec(text.slice(i, i + 2048));
      if (bare) {
        const url = trimUrl(bare[0]);
        const href = safeHref(url);
        if (href) {
          push({ kind: "link", href, children: [{ kind: "text", text: url }] });
          i += url.length;
          continue;
        }
      }
    }
    if (depth < MAX_INLINE_DEPTH && (c === "*" || c === "_" || (c === "~" && text.charAt(i + 1) === "~"))) {
      const emphasis = emphasisAt(text, i);
      if (emphasis) {
        push({ kind: emphasis.kind, children: parseInline(emphasis.inner, depth + 1) });
        i = emphasis.end;
        continue;
      }
      // A run of delimiters that opens nothing is text as a whole (not retried one character at a time).
      const run = /^([*_~])\1*/.exec(text.slice(i, i + 64))?.[0] ?? c;
      buffer += run;
      i += run.length;
      continue;
    }
    buffer += c;
    i++;
  }
  flush();
  return out;
}

function findCodeClose(text: string, from: number, length: number): number {
  let at = text.indexOf("`", from);
  while (at >= 0) {
    let end = at;
    while (text.charAt(end) === "`") end++;
    if (end - at === length) return at;
    at = text.indexOf("`", end);
  }
  return -1;
}

/** `[label](url "title")` starting at `start` (the `[`), or null. */
function linkAt(text: string, start: number): { label: string; url: string; end: number } | null {
  let depth = 0;
  let close = -1;
  for (let j = start; j < Math.min(text.length, start + 1000); j++) {
    if (text.charAt(j) === "\\") j++;
    else if (text.charAt(j) === "[") depth++;
    else if (text.charAt(j) === "]" && --depth === 0) {
      close = j;
      break;
    }
  }
  if (close < 0 || text.charAt(close + 1) !== "(") return null;
  let parens = 0;
  for (let j = close + 2; j < Math.min(text.length, close + 2050); j++) {
    if (text.charAt(j) === "(") parens++;
    else if (text.charAt(j) === ")" && parens-- === 0) {
      const target = text.slice(close + 2, j).trim();
      // `<address with spaces>`, or the address up to an optional "title".
      const url = target.startsWith("<")
        ? target.slice(1, target.indexOf(">") > 0 ? target.indexOf(">") : undefined)
        : (target.split(/\s+/)[0] ?? "");
      return { label: text.slice(start + 1, close), url, end: j + 1 };
    }
  }
  return null;
}

/** A bare address ends before trailing punctuation, and before a `)` it did not open. */
function trimUrl(url: string): string {
  let end = url.length;
  for (;;) {
    const last = url.charAt(end - 1);
    if (/[.,;:!?'"*_~]/.test(last)) end--;
    else if (last === ")" && (url.slice(0, end).match(/\(/g)?.length ?? 0) < (url.slice(0, end).match(/\)/g)?.length ?? 0)) end--;
    else return url.slice(0, end);
  }
}

function emphasisAt(text: string, start: number): { kind: "strong" | "em" | "del"; inner: string; end: number } | null {
  const c = text.charAt(start);
  const double = text.charAt(start + 1) === c;
  if (c === "~" && !double) return null;
  const delimiter = double ? c + c : c;
  const kind = c === "~" ? "del" : double ? "strong" : "em";
  const open = start + delimiter.length;
  // The opening delimiter must touch its text; an underscore inside a word (snake_case) opens nothing.
  if (open >= text.length || /\s/.test(text.charAt(open)) || (!double && text.charAt(open) === c)) return null;
  if (c === "_" && start > 0 && WORD.test(text.charAt(start - 1))) return null;
  let at = text.indexOf(delimiter, open);
  for (let tries = 0; at >= 0 && tries < MAX_CANDIDATES; tries++) {
    const before = text.charAt(at - 1);
    const after = text.charAt(at + delimiter.length);
    const touches = at > open && !/\s/.test(before);
    // A single delimiter inside a double one (`*a **b** c*`) is not the closing one.
    const partOfRun = !double && (before === c || after === c);
    const intraword = c === "_" && WORD.test(after);
    if (touches && !partOfRun && !intraword) return { kind, inner: text.slice(open, at), end: at + delimiter.length };
    at = text.indexOf(delimiter, at + 1);
  }
  return null;
}
