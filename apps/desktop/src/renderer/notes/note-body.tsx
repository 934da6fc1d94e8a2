import { noteExtensions } from "@tandem/core/editor";
import Collaboration from "@tiptap/extension-collaboration";
import { EditorContent, useEditor } from "@tiptap/react";
import type * as Y from "yjs";
import { AutoDirection } from "./auto-direction";
import { EditorToolbar } from "./editor-toolbar";

/**
 * The rich-text body: TipTap in the note schema, bound to the note document's `default` fragment
 * by the Yjs collaboration binding, so edits go straight into the document (and from there to the
 * local hub and the server) and changes from elsewhere appear as they arrive.
 */
export function NoteBody({ noteDoc }: { noteDoc: Y.Doc }) {
  const editor = useEditor(
    {
      extensions: [...noteExtensions, AutoDirection, Collaboration.configure({ document: noteDoc })],
      editorProps: {
        attributes: { class: "note-body-content", role: "textbox", "aria-multiline": "true", "aria-label": "Note body" },
      },
    },
    [noteDoc],
  );
  return (
    <div className="note-body">
      <EditorToolbar editor={editor} />
      <EditorContent editor={editor} className="note-body-scroll" />
    </div>
  );
}
