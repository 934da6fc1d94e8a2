import { relativeTime } from "../relative-time";
import { parseMarkdown } from "./markdown";
import type { Block, Inline } from "./rich-model";

/**
 * The closed model ({@link Block}s) as DOM elements, for pages without React (the server's guest
 * page, which runs this in the browser). Elements are made one by one and text goes in as text
 * nodes: nothing is ever parsed as HTML, so markup in a message shows as its characters. The DOM
 * is typed by the few calls made here, so `@tandem/core` needs no DOM library.
 */
export interface RichDocument {
  createElement(tag: string): RichElement;
  createTextNode(text: string): unknown;
}

export interface RichElement {
  appendChild(node: never): unknown;
  setAttribute(name: string, value: string): void;
}

interface Output {
  readonly document: RichDocument;
  /** The page level of a `#` heading in the text (a heading in a message is not the page's title). */
  readonly headingLevel: number;
}

/** Appends `markdown`, read as the Agent reads it, to `parent`; answers `parent`. */
export function appendMarkdown<T extends RichElement>(document: RichDocument, parent: T, markdown: string, headingLevel = 3): T {
  appendBlocks({ document, headingLevel }, parent, parseMarkdown(markdown));
  return parent;
}

function append(parent: RichElement, child: unknown): void {
  parent.appendChild(child as never);
}

function element(out: Output, parent: RichElement, tag: string): RichElement {
  const made = out.document.createElement(tag);
  append(parent, made);
  return made;
}

function appendBlocks(out: Output, parent: RichElement, blocks: readonly Block[]): void {
  for (const block of blocks) appendBlock(out, parent, block);
}

function appendBlock(out: Output, parent: RichElement, block: Block): void {
  switch (block.kind) {
    case "paragraph":
      appendInlines(out, element(out, parent, "p"), block.children);
      return;
    case "heading":
      appendInlines(out, element(out, parent, `h${Math.min(6, out.headingLevel + block.level - 1)}`), block.children);
      return;
    case "list": {
      const list = element(out, parent, block.ordered ? "ol" : "ul");
      if (block.ordered && block.start !== 1) list.setAttribute("start", String(block.start));
      for (const item of block.items) {
        const li = element(out, list, "li");
        // A list item that is one paragraph reads as a line, without a paragraph's margins.
        const only = item.length === 1 ? item[0] : undefined;
        if (only?.kind === "paragraph") appendInlines(out, li, only.children);
        else appendBlocks(out, li, item);
      }
      return;
    }
    case "quote":
      appendBlocks(out, element(out, parent, "blockquote"), block.children);
      return;
    case "code":
      append(element(out, element(out, parent, "pre"), "code"), out.document.createTextNode(block.text));
      return;
    case "table": {
      const table = element(out, element(out, parent, "div"), "table");
      if (block.header.length > 0) {
        const row = element(out, element(out, table, "thead"), "tr");
        for (const cell of block.header) appendInlines(out, element(out, row, "th"), cell);
      }
      const body = element(out, table, "tbody");
      for (const cells of block.rows) {
        const row = element(out, body, "tr");
        for (const cell of cells) appendInlines(out, element(out, row, "td"), cell);
      }
      return;
    }
    case "rule":
      element(out, parent, "hr");
      return;
  }
}

function appendInlines(out: Output, parent: RichElement, inlines: readonly Inline[]): void {
  for (const inline of inlines) {
    switch (inline.kind) {
      case "text":
        append(parent, out.document.createTextNode(inline.text));
        break;
      case "break":
        element(out, parent, "br");
        break;
      case "code":
        append(element(out, parent, "code"), out.document.createTextNode(inline.text));
        break;
      case "time": {
        const time = element(out, parent, "time");
        time.setAttribute("datetime", inline.datetime);
        append(time, out.document.createTextNode(relativeTime(inline.datetime)));
        break;
      }
      case "link": {
        // `href` is already a checked web or mail address (see `safeHref`); it opens in a new tab.
        const link = element(out, parent, "a");
        link.setAttribute("href", inline.href);
        link.setAttribute("target", "_blank");
        link.setAttribute("rel", "noopener noreferrer nofollow");
        appendInlines(out, link, inline.children);
        break;
      }
      default:
        appendInlines(out, element(out, parent, inline.kind), inline.children);
    }
  }
}
