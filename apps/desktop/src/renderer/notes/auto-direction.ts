import { Extension } from "@tiptap/core";
import type { Node } from "@tiptap/pm/model";
import { Plugin, PluginKey } from "@tiptap/pm/state";
import { Decoration, DecorationSet } from "@tiptap/pm/view";

/**
 * `dir="auto"` on every block (paragraphs, headings, list items, quotes, code): each takes its
 * direction from its own first strong letter, so a Hebrew or Arabic line reads right to left beside
 * English ones. Decorations, not document attributes: the shared note schema (and the server's
 * conversions) stay as they are, and nothing is written to the document.
 */
function blockDirections(doc: Node): DecorationSet {
  const decorations: Decoration[] = [];
  doc.descendants((node, pos) => {
    if (node.isBlock) decorations.push(Decoration.node(pos, pos + node.nodeSize, { dir: "auto" }));
    return !node.isTextblock;
  });
  return DecorationSet.create(doc, decorations);
}

const key = new PluginKey<DecorationSet>("autoDirection");

export const AutoDirection = Extension.create({
  name: "autoDirection",
  addProseMirrorPlugins() {
    return [
      new Plugin({
        key,
        // Recomputed only when the document changes, not on every cursor move.
        state: {
          init: (_config, state) => blockDirections(state.doc),
          apply: (tr, previous) => (tr.docChanged ? blockDirections(tr.doc) : previous),
        },
        props: { decorations: (state) => key.getState(state) },
      }),
    ];
  },
});
