import type { JSONContent } from "@tiptap/core";
import { updateYFragment } from "y-prosemirror";
import * as Y from "yjs";
import { normalizeJson, toNoteNode } from "./normalize";

/** The Y.XmlFragment holding a note body (TipTap's Collaboration extension uses this name). */
export const NOTE_FRAGMENT = "default";

/**
 * Make the note body equal to `json` as a forward change. y-prosemirror's updateYFragment (what
 * its editor binding runs for every local edit) keeps the Yjs types of unchanged blocks and edits
 * changed text in place, so concurrent edits to other blocks, or to other parts of the same
 * paragraph, survive the merge; replacing the whole fragment would make this write delete them.
 * The fresh, empty mapping means every node is compared by content, not by identity.
 */
export function writeNoteBody(doc: Y.Doc, json: JSONContent, origin?: unknown): void {
  const node = toNoteNode(json);
  // updateYFragment opens its own transaction with y-prosemirror's origin, and a document's first
  // getXmlFragment opens one with none; nested inside ours, both join it, so observers see a
  // single transaction carrying the caller's origin.
  doc.transact(() => updateYFragment(doc, doc.getXmlFragment(NOTE_FRAGMENT), node, { mapping: new Map(), isOMark: new Map() }), origin);
}

/**
 * The note body as canonical JSON. y-prosemirror's own reader deletes Yjs content that doesn't
 * fit the schema, a write hidden in a read; this one only reads, and the normaliser drops or
 * refits what doesn't fit. The walk uses an explicit stack because a document written by another
 * client may be nested deeper than recursion allows.
 */
export function readNoteBody(doc: Y.Doc): JSONContent {
  const body: JSONContent[] = [];
  const stack: [YNode, JSONContent[]][] = [];
  const pushChildren = (parent: Y.XmlFragment, out: JSONContent[]) => {
    const children = parent.toArray();
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i] as YNode, out]);
  };
  pushChildren(doc.getXmlFragment(NOTE_FRAGMENT), body);
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, out] = entry;
    if (node instanceof Y.XmlText) {
      for (const { insert, attributes } of node.toDelta() as TextDelta[]) {
        out.push({ type: "text", text: insert, marks: Object.entries(attributes ?? {}).map(([type, attrs]) => ({ type, attrs })) });
      }
    } else if (node instanceof Y.XmlElement) {
      const content: JSONContent[] = [];
      out.push({ type: node.nodeName, attrs: node.getAttributes(), content });
      pushChildren(node, content);
    }
  }
  return normalizeJson({ type: "doc", content: body });
}

type YNode = Y.XmlElement | Y.XmlText | Y.XmlHook;

/** How y-prosemirror stores marked text: each mark is a formatting attribute holding its attrs. */
type TextDelta = { insert: string; attributes?: Record<string, Record<string, unknown>> };
