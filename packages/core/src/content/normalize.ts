import type { JSONContent } from "@tiptap/core";
import type { Node as PMNode } from "@tiptap/pm/model";
import { parseHtml } from "./html-parser";
import { fragmentToHtml } from "./html-writer";
import { isAllowedHref, noteSchema } from "./schema";

type Mark = NonNullable<JSONContent["marks"]>[number];

/**
 * The deepest nesting kept, counting every node below the document: 512 is about 255 levels of
 * lists (a list and its item are two levels) or 511 of quotes. ProseMirror, y-prosemirror and the
 * Markdown serializer all recurse per level and overflow the stack somewhere past 700 levels,
 * so this leaves headroom for the caller's own stack. Anything deeper is kept as paragraphs of
 * plain text at the limit, so a hostile or broken document loses structure, never text.
 */
export const MAX_DEPTH = 512;

/**
 * Turn JSON from any source (the Markdown parser, a Y.Doc written by another client, an API
 * caller) into a valid note document. Every body passes through here, so this is where the
 * schema's rules are enforced:
 * - unknown node types are unwrapped (their content kept); unknown marks and attributes dropped;
 * - links to anything but http, https or mailto lose their link mark (the text stays);
 * - links keep only `href` and `title`, the parts Markdown can carry, so stray `class`, `target`
 *   or `rel` values from pasted HTML can't restyle or retarget the app;
 * - content the schema doesn't allow (a list inside a paragraph, bold inside a code block…) is
 *   refitted by rendering it to HTML and parsing that back, the way ProseMirror fits arbitrary
 *   markup into a schema, instead of being rejected;
 * - content nested deeper than MAX_DEPTH is flattened into paragraphs of its text (see below);
 * - an empty document gets its one empty paragraph.
 */
export function toNoteNode(json: JSONContent): PMNode {
  const content: JSONContent[] = [];
  clean(json.type === "doc" ? json.content : json, content, 1);
  const doc = noteSchema.nodeFromJSON({ type: "doc", content });
  try {
    doc.check();
  } catch {
    return parseHtml(fragmentToHtml(doc.content));
  }
  return doc.childCount > 0 ? doc : noteSchema.node("doc", null, [noteSchema.node("paragraph")]);
}

/** The canonical JSON of a note document: `toNoteNode`, as ProseMirror writes it. */
export function normalizeJson(json: JSONContent): JSONContent {
  return toNoteNode(json).toJSON();
}

/** Append the cleaned form of `json` (a node, or nested arrays of nodes) at `depth` to `out`. */
function clean(json: unknown, out: JSONContent[], depth: number): void {
  if (Array.isArray(json)) {
    for (const item of json) clean(item, out, depth);
    return;
  }
  if (typeof json !== "object" || json === null) return;
  const node = json as JSONContent;
  if (node.type === "text") {
    // ProseMirror refuses empty text nodes, and they carry nothing anyway.
    if (typeof node.text === "string" && node.text !== "") out.push({ type: "text", text: node.text, marks: cleanMarks(node.marks) });
    return;
  }
  if (depth > MAX_DEPTH) {
    flatten(node, out);
    return;
  }
  const type = node.type === undefined ? undefined : noteSchema.nodes[node.type];
  if (type === undefined || type === noteSchema.topNodeType) {
    clean(node.content, out, depth);
    return;
  }
  const content: JSONContent[] = [];
  clean(node.content, content, depth + 1);
  out.push({ type: type.name, attrs: pick(node.attrs, type.spec.attrs), content, marks: cleanMarks(node.marks) });
}

const END_OF_BLOCK = Symbol("end of block");

/**
 * Append the text of `json` as paragraphs, a new one wherever a node starts or ends, walking with
 * an explicit stack: the subtree may be nested far deeper than recursion allows.
 */
function flatten(json: JSONContent, out: JSONContent[]): void {
  let text = "";
  const endBlock = () => {
    if (text !== "") out.push({ type: "paragraph", content: [{ type: "text", text }] });
    text = "";
  };
  const stack: unknown[] = [json];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item === END_OF_BLOCK) {
      endBlock();
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push(item[i]);
    } else if (typeof item === "object" && item !== null) {
      const node = item as JSONContent;
      if (typeof node.text === "string") {
        text += node.text;
      } else {
        endBlock();
        stack.push(END_OF_BLOCK, node.content);
      }
    }
  }
  endBlock();
}

function cleanMarks(marks: JSONContent["marks"]): Mark[] | undefined {
  if (marks === undefined) return undefined;
  const cleaned: Mark[] = [];
  for (const mark of marks) {
    const type = noteSchema.marks[mark.type];
    if (type?.name === "link") {
      const { href, title } = mark.attrs ?? {};
      if (isAllowedHref(href)) cleaned.push({ type: "link", attrs: { href, title: typeof title === "string" ? title : null } });
    } else if (type !== undefined) {
      cleaned.push({ type: type.name, attrs: pick(mark.attrs, type.spec.attrs) });
    }
  }
  return cleaned;
}

/** Keep only the attributes the schema declares; ProseMirror throws on any other. */
function pick(attrs: Record<string, unknown> | undefined, allowed: object | undefined): Record<string, unknown> | undefined {
  if (attrs === undefined || allowed === undefined) return undefined;
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(attrs)) if (Object.hasOwn(allowed, key)) picked[key] = attrs[key];
  return picked;
}
