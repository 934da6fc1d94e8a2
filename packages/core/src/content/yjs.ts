import type { JSONContent } from "@tiptap/core";
import { updateYFragment } from "y-prosemirror";
import * as Y from "yjs";
import { normalizeJson, toNoteNode } from "./normalize";

/** The Y.XmlFragment holding a note body (TipTap's Collaboration extension uses this name). */
export const NOTE_FRAGMENT = "default";

/**
 * The deepest nesting of Yjs types a document should reach, counting a root type's children as
 * level 1. Yjs (deleting and garbage-collecting a subtree) and y-prosemirror recurse once or more
 * per level and overflow the stack a few thousand levels down. Note bodies keep MAX_DEPTH (512)
 * levels, plus one for text; workspace and todos documents use three. The server refuses sync
 * updates that nest deeper, and {@link writeNoteBody} takes apart bodies that already do.
 */
export const MAX_TYPE_DEPTH = 1000;

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
  doc.transact(() => {
    const fragment = doc.getXmlFragment(NOTE_FRAGMENT);
    dismantleIfTooDeep(doc, fragment);
    updateYFragment(doc, fragment, node, { mapping: new Map(), isOMark: new Map() });
  }, origin);
}

/**
 * A body nested deeper than {@link MAX_TYPE_DEPTH} (written by a client before the server bounded
 * depth) can't be diffed or deleted the usual way: y-prosemirror's diff, Yjs's delete and its
 * garbage collection all recurse per level. Take it apart bottom-up instead: each element is
 * emptied after its children, then collected after them, so no step recurses more than one
 * level and the transaction's own collection finds nothing left to walk. The new body is then
 * written into an empty fragment.
 */
function dismantleIfTooDeep(doc: Y.Doc, fragment: Y.XmlFragment): void {
  const postOrder: Y.XmlElement[] = [];
  let deepest = 0;
  const stack: [Y.XmlFragment | Y.XmlElement, number, boolean][] = [[fragment, 0, false]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, depth, visited] = entry;
    if (visited) {
      postOrder.push(node as Y.XmlElement);
      continue;
    }
    deepest = Math.max(deepest, depth);
    if (depth > 0) stack.push([node, depth, true]);
    for (const child of node.toArray()) if (child instanceof Y.XmlElement) stack.push([child, depth + 1, false]);
  }
  if (deepest <= MAX_TYPE_DEPTH) return;
  for (const element of postOrder) element.delete(0, element.length);
  fragment.delete(0, fragment.length);
  if (doc.gc) for (const element of postOrder) element._item?.gc(doc.store, false);
}

/**
 * Applies a stored state (or a snapshot's) to a document without garbage collection. Loading
 * never has anything to collect in a state this server wrote, but a state whose deleted content
 * nests thousands of levels deep (left by a server without depth limits) would overflow the
 * stack in Yjs's recursive collection and make the document unreadable.
 */
export function applyStoredState(doc: Y.Doc, state: Uint8Array): void {
  const gc = doc.gc;
  doc.gc = false;
  try {
    Y.applyUpdate(doc, state);
  } finally {
    doc.gc = gc;
  }
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
