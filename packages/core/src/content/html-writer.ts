import type { Fragment } from "@tiptap/pm/model";
import { DOMSerializer } from "@tiptap/pm/model";
import { noteSchema } from "./schema";

/**
 * Render a fragment of the note schema as an HTML string.
 *
 * ProseMirror's DOMSerializer is used as is (so every extension's renderHTML applies), but it
 * builds its output through a tiny string-backed stand-in for `document` instead of happy-dom,
 * which was about 4 s per MB of Markdown-sized content (a note read would take 40 ms at 10 kB).
 * The stand-in implements exactly the calls DOMSerializer makes for this schema's specs:
 * createElement, createTextNode, setAttribute and appendChild. A spec
 * needing more (namespaced SVG, a node returning a real DOM node) would fail loudly, not silently.
 */
export function fragmentToHtml(fragment: Fragment): string {
  const root = new ElementNode("");
  DOMSerializer.fromSchema(noteSchema).serializeFragment(fragment, { document: stringDocument as never }, root as never);
  return root.innerHTML();
}

/** Elements that have no end tag (HTML's void elements). */
const VOID_ELEMENTS = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"]);

class TextNode {
  constructor(readonly text: string) {}

  html(): string {
    return this.text.replace(/[&<>\u00a0]/g, escapeChar);
  }
}

class ElementNode {
  private readonly attributes = new Map<string, string>();
  private readonly children: (ElementNode | TextNode)[] = [];

  constructor(private readonly tagName: string) {}

  setAttribute(name: string, value: unknown): void {
    this.attributes.set(name, String(value));
  }

  appendChild<T extends ElementNode | TextNode>(child: T): T {
    this.children.push(child);
    return child;
  }

  innerHTML(): string {
    let html = "";
    for (const child of this.children) html += child.html();
    return html;
  }

  html(): string {
    let html = `<${this.tagName}`;
    for (const [name, value] of this.attributes) html += ` ${name}="${value.replace(/[&"<>\u00a0]/g, escapeChar)}"`;
    return VOID_ELEMENTS.has(this.tagName) ? `${html}>` : `${html}>${this.innerHTML()}</${this.tagName}>`;
  }
}

const stringDocument = {
  createElement: (tagName: string) => new ElementNode(tagName),
  createTextNode: (text: string) => new TextNode(text),
};

/**
 * The escapes of the HTML fragment serialisation algorithm (what `innerHTML` returns), including
 * `<` and `>` in attribute values, which browsers now escape to prevent mutation XSS.
 */
function escapeChar(char: string): string {
  switch (char) {
    case "&":
      return "&amp;";
    case "<":
      return "&lt;";
    case ">":
      return "&gt;";
    case '"':
      return "&quot;";
    default:
      return "&nbsp;";
  }
}
