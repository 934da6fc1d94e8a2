import { type Block, type Inline, safeHref } from "@tandem/core/rich-text";

/**
 * HTML from the server (a briefing's sections), read into {@link Block}s through an allow-list:
 * the browser's `DOMParser` builds an inert document (no script runs, no image or style loads),
 * and only the structure below is kept: paragraphs, headings, lists, quotes, code, tables, rules,
 * bold, italic, underline, strikethrough, code, links to web or mail addresses, and instants
 * (`<time>ISO</time>`, shown relative to now by `RichText`). Attributes are
 * all dropped but a link's checked address; the content of scripts, styles, frames, forms and
 * media is dropped whole; any other element gives way to its text. The page never receives HTML.
 */
export function parseHtml(html: string): Block[] {
  const document = new DOMParser().parseFromString(html, "text/html");
  return blocksOf(document.body.childNodes, 0);
}

/** Elements nobody reads as text: dropped with everything inside them. */
const DROPPED = new Set([
  "script",
  "style",
  "template",
  "iframe",
  "frame",
  "frameset",
  "object",
  "embed",
  "noscript",
  "textarea",
  "select",
  "button",
  "title",
  "head",
  "svg",
  "math",
  "img",
  "picture",
  "video",
  "audio",
  "canvas",
  "input",
  "link",
  "meta",
]);
/** Elements that hold blocks: their content is read as blocks, the element itself leaves no trace. */
const CONTAINERS = new Set([
  "div",
  "section",
  "article",
  "main",
  "header",
  "footer",
  "aside",
  "nav",
  "figure",
  "figcaption",
  "details",
  "summary",
  "address",
  "dl",
  "dt",
  "dd",
  "center",
  "body",
  "html",
  "form",
  "fieldset",
]);
const BLOCK_TAGS = new Set(["p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "blockquote", "pre", "hr", "table", ...CONTAINERS]);
const INLINE_KINDS: Record<string, "strong" | "em" | "u" | "del"> = {
  strong: "strong",
  b: "strong",
  em: "em",
  i: "em",
  cite: "em",
  u: "u",
  ins: "u",
  s: "del",
  del: "del",
  strike: "del",
};
/** Nesting deeper than this is read as text only (hostile input must not exhaust the stack). */
const MAX_DEPTH = 24;

const tagOf = (node: Node) => (node.nodeType === Node.ELEMENT_NODE ? (node as Element).localName : "");

function blocksOf(nodes: NodeListOf<ChildNode> | readonly ChildNode[], depth: number): Block[] {
  const blocks: Block[] = [];
  let run: ChildNode[] = [];
  const endRun = () => {
    const children = trimInlines(inlinesOf(run, depth));
    if (children.length > 0) blocks.push({ kind: "paragraph", children });
    run = [];
  };
  for (const node of nodes) {
    const tag = tagOf(node);
    if (DROPPED.has(tag)) continue;
    if (!BLOCK_TAGS.has(tag)) {
      run.push(node);
      continue;
    }
    endRun();
    blocks.push(...blockOf(node as Element, tag, depth));
  }
  endRun();
  return blocks;
}

function blockOf(element: Element, tag: string, depth: number): Block[] {
  if (depth >= MAX_DEPTH) {
    const text = collapse(element.textContent ?? "").trim();
    return text ? [{ kind: "paragraph", children: [{ kind: "text", text }] }] : [];
  }
  if (CONTAINERS.has(tag)) return blocksOf(element.childNodes, depth + 1);
  if (tag === "p") {
    const children = trimInlines(inlinesOf(element.childNodes, depth + 1));
    return children.length > 0 ? [{ kind: "paragraph", children }] : [];
  }
  if (/^h[1-6]$/.test(tag)) {
    return [{ kind: "heading", level: Number(tag[1]), children: trimInlines(inlinesOf(element.childNodes, depth + 1)) }];
  }
  if (tag === "ul" || tag === "ol") {
    const items = [...element.children].filter((child) => child.localName === "li").map((item) => blocksOf(item.childNodes, depth + 1));
    const start = Number.parseInt(element.getAttribute("start") ?? "1", 10);
    return items.length > 0 ? [{ kind: "list", ordered: tag === "ol", start: Number.isFinite(start) ? start : 1, items }] : [];
  }
  if (tag === "blockquote") return [{ kind: "quote", children: blocksOf(element.childNodes, depth + 1) }];
  if (tag === "pre") return [{ kind: "code", text: element.textContent ?? "" }];
  if (tag === "hr") return [{ kind: "rule" }];
  // A table: its rows, the first one as the header when it has header cells (or sits in a thead).
  const rows = [...element.querySelectorAll("tr")].map((row) =>
    [...row.children]
      .filter((cell) => cell.localName === "td" || cell.localName === "th")
      .map((cell) => trimInlines(inlinesOf(cell.childNodes, depth + 1))),
  );
  if (rows.length === 0) return [];
  const first = element.querySelector("tr");
  const headed = first !== null && (first.parentElement?.localName === "thead" || first.querySelector("th") !== null);
  return [{ kind: "table", header: headed ? (rows[0] ?? []) : [], rows: headed ? rows.slice(1) : rows }];
}

function inlinesOf(nodes: NodeListOf<ChildNode> | readonly ChildNode[], depth: number): Inline[] {
  const out: Inline[] = [];
  for (const node of nodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = collapse(node.textContent ?? "");
      if (text) out.push({ kind: "text", text });
      continue;
    }
    const tag = tagOf(node);
    if (!tag || DROPPED.has(tag)) continue;
    const element = node as Element;
    if (tag === "br") {
      out.push({ kind: "break" });
      continue;
    }
    if (depth >= MAX_DEPTH) {
      const text = collapse(element.textContent ?? "");
      if (text) out.push({ kind: "text", text });
      continue;
    }
    const children = inlinesOf(element.childNodes, depth + 1);
    const kind = INLINE_KINDS[tag];
    if (kind) out.push({ kind, children });
    else if (tag === "code" || tag === "kbd" || tag === "samp") out.push({ kind: "code", text: element.textContent ?? "" });
    else if (tag === "time") out.push(...timeOf(element, children));
    else if (tag === "a") {
      const href = safeHref(element.getAttribute("href"));
      if (href) out.push({ kind: "link", href, children });
      else out.push(...children);
    }
    // Blocks inside inline content (a list in a span) and unknown elements give way to their text.
    else out.push(...children);
  }
  return out;
}

/**
 * A `<time>`: its instant (the `datetime` attribute, or the text as HTML allows) when it is one,
 * else its text as it is.
 */
function timeOf(element: Element, children: Inline[]): Inline[] {
  const datetime = (element.getAttribute("datetime") ?? element.textContent ?? "").trim();
  return /^\d{4}-\d{2}-\d{2}T/.test(datetime) && !Number.isNaN(Date.parse(datetime)) ? [{ kind: "time", datetime }] : children;
}

/** HTML's white space: any run of it reads as one space. */
const collapse = (text: string) => text.replace(/[ \t\n\r\f]+/g, " ");

/** Neighbouring texts joined, and no spaces between tags at the start or end of a paragraph. */
function trimInlines(inlines: Inline[]): Inline[] {
  const out: Inline[] = [];
  for (const inline of inlines) {
    const previous = out.at(-1);
    if (inline.kind === "text" && previous?.kind === "text")
      out[out.length - 1] = { kind: "text", text: collapse(previous.text + inline.text) };
    else out.push(inline);
  }
  const first = out[0];
  if (first?.kind === "text") out[0] = { kind: "text", text: first.text.trimStart() };
  const lastIndex = out.length - 1;
  const last = out[lastIndex];
  if (last?.kind === "text") out[lastIndex] = { kind: "text", text: last.text.trimEnd() };
  return out.filter((inline) => inline.kind !== "text" || inline.text !== "");
}
