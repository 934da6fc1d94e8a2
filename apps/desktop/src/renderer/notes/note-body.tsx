import { noteExtensions } from "@tandem/core/editor";
import Collaboration from "@tiptap/extension-collaboration";
import { type Editor, EditorContent, useEditor } from "@tiptap/react";
import { useEffect, useRef, useState } from "react";
import type * as Y from "yjs";
import { AutoDirection } from "./auto-direction";
import { EditorToolbar } from "./editor-toolbar";

/**
 * The rich-text body: TipTap in the note schema, bound to the note document's `default` fragment
 * by the Yjs collaboration binding, so edits go straight into the document (and from there to the
 * local hub and the server) and changes from elsewhere appear as they arrive.
 *
 * `onReady` is called once the document's text is in the editor: the binding renders it a turn
 * after the editor is made, and anything written into the editor before then would be replaced.
 */
export function NoteBody({ noteDoc, onReady }: { noteDoc: Y.Doc; onReady?: (editor: Editor) => void }) {
  // Which document's text is rendered (the editor is made again for another document).
  const [rendered, setRendered] = useState<Y.Doc | null>(null);
  const editor = useEditor(
    {
      extensions: [
        ...noteExtensions,
        AutoDirection,
        Collaboration.configure({ document: noteDoc, onFirstRender: () => setRendered(noteDoc) }),
      ],
      editorProps: {
        attributes: { class: "note-body-content", role: "textbox", "aria-multiline": "true", "aria-label": "Note body" },
      },
    },
    [noteDoc],
  );
  const readyRef = useRef(onReady);
  readyRef.current = onReady;
  useEffect(() => {
    if (rendered === noteDoc && editor) readyRef.current?.(editor);
  }, [rendered, noteDoc, editor]);
  return (
    <div className="note-body">
      <EditorToolbar editor={editor} />
      <EditorContent editor={editor} className="note-body-scroll" />
    </div>
  );
}
