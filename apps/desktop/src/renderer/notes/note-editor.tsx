import { type NoteMeta, noteDocName } from "@tandem/core/documents";
import type { Editor } from "@tiptap/react";
import { Suspense, useCallback, useEffect, useRef, useState } from "react";
import type * as Y from "yjs";
import type { DesktopApi } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { LoadingView } from "../components/lazy-view";
import { useYDoc } from "../sync/use-document";
import { LazyNoteBody } from "./lazy-note-body";
import { NoteHeader } from "./note-header";
import { PaneResizer } from "./pane-resizer";
import { SnapshotsPanel } from "./snapshots-panel";
import { useTouchOnEdit } from "./use-touch-on-edit";
import { recreateNote, restoreTrashed, touchNote } from "./workspace-actions";
import { isTrashedNote, type Workspace } from "./workspace-model";
import "./trash.css";

interface NoteEditorProps {
  readonly api: DesktopApi;
  /** Null while the workspace document loads (the first view): the body can be edited, the header waits. */
  readonly workspaceDoc: Y.Doc | null;
  readonly workspace: Workspace;
  readonly uuid: string;
  /** The note's entry, or, once another device trashed or deleted it, what this window last knew of it. */
  readonly meta: NoteMeta;
  /**
   * Set while the note is new and stored nowhere yet (see notes-view.tsx): stores it. Called before
   * the first change to it (a key in its title or text, a folder, a pin).
   */
  readonly onFirstEdit: (() => void) | null;
  /** Called when the owner deletes the note here (it then closes). */
  readonly onDeleted: () => void;
  /** The snapshots panel beside the editor, when open (the notes view decides its width). */
  readonly snapshots: { readonly width: number; onResize(width: number): void; onClose(): void } | null;
  readonly onToggleSnapshots: () => void;
}

/** The open note: its header (title, folder, pin, snapshots, delete), the editor and, on demand, its snapshots. */
export function NoteEditor({
  api,
  workspaceDoc,
  workspace,
  uuid,
  meta,
  onFirstEdit,
  onDeleted,
  snapshots,
  onToggleSnapshots,
}: NoteEditorProps) {
  const body = useYDoc(noteDocName(uuid));
  const listed = workspace.notes.has(uuid) || onFirstEdit !== null;
  const typedAhead = useTypedAhead(onFirstEdit);
  return (
    <div className="note-editor">
      <article className="note-main" aria-label="Note">
        {listed ? (
          <NoteHeader
            workspaceDoc={workspaceDoc}
            workspace={workspace}
            uuid={uuid}
            meta={meta}
            onFirstEdit={onFirstEdit}
            snapshotsOpen={snapshots !== null}
            onToggleSnapshots={onToggleSnapshots}
            onTitleDone={typedAhead.focusBody}
            onDeleted={onDeleted}
          />
        ) : (
          <GoneBanner
            trashed={isTrashedNote(workspace, uuid)}
            title={meta.title}
            onRestore={() => {
              if (!workspaceDoc) return;
              if (isTrashedNote(workspace, uuid)) restoreTrashed(workspaceDoc, uuid);
              else recreateNote(workspaceDoc, uuid, meta);
            }}
          />
        )}
        {typedAhead.text !== null && (
          <textarea
            className="note-body-pending"
            aria-label="Text, while the note opens"
            // biome-ignore lint/a11y/noAutofocus: Enter in the title moved here, as it moves to the text once that is open.
            autoFocus
            value={typedAhead.text}
            onChange={(event) => typedAhead.type(event.target.value)}
          />
        )}
        {body.status === "loading" && typedAhead.text === null && <LoadingView />}
        {body.status === "failed" && <ErrorNotice message={body.message} />}
        {body.status === "ready" && (
          <EditableBody
            workspaceDoc={workspaceDoc}
            uuid={uuid}
            noteDoc={body.doc}
            onFirstEdit={onFirstEdit}
            onReady={typedAhead.onBodyReady}
          />
        )}
      </article>
      {snapshots && (
        <>
          <PaneResizer pane="snapshots" label="Resize the snapshots" width={snapshots.width} after onResize={snapshots.onResize} />
          <SnapshotsPanel api={api} noteUuid={uuid} width={snapshots.width} onClose={snapshots.onClose} />
        </>
      )}
    </div>
  );
}

/** Said in place of the header when the open note left the list on another device; its text stays below. */
function GoneBanner({ trashed, title, onRestore }: { trashed: boolean; title: string; onRestore: () => void }) {
  return (
    <div className="note-gone" role="alert">
      <p>
        <strong>{title.trim() === "" ? "This note" : `“${title}”`}</strong>{" "}
        {trashed ? "was moved to the Trash on another device." : "was deleted on another device."} Its text is still here.
      </p>
      <button type="button" className="primary" onClick={onRestore}>
        Restore note
      </button>
    </div>
  );
}

/** The note's text as plain paragraphs, one per line, for the editor. */
const paragraphsOf = (text: string) =>
  text.split("\n").map((line) => (line === "" ? { type: "paragraph" } : { type: "paragraph", content: [{ type: "text", text: line }] }));

/**
 * Enter (or ↓) in the title goes on to the text, as in any notes app. The text's editor may not be
 * there yet: its document still loading from the host (slow on a busy machine, or offline as the
 * server goes), or the editor's code. Focus then moves at once to a plain field standing in for the
 * text, so the keys that follow never land in the title; once the editor has the document's text,
 * what was typed meanwhile goes in at the start of the text (where Enter puts the caret) and the
 * caret goes on after it.
 */
function useTypedAhead(onFirstEdit: (() => void) | null) {
  const [text, setText] = useState<string | null>(null);
  // Read by the editor's callback, which may come between two keys, before a render.
  const textRef = useRef<string | null>(null);
  const editorRef = useRef<Editor | null>(null);
  const firstEditRef = useRef(onFirstEdit);
  firstEditRef.current = onFirstEdit;
  const type = useCallback((next: string | null) => {
    textRef.current = next;
    setText(next);
  }, []);
  const focusBody = useCallback(() => {
    const editor = editorRef.current;
    if (editor && !editor.isDestroyed) editor.commands.focus();
    else if (textRef.current === null) type("");
  }, [type]);
  const onBodyReady = useCallback(
    (editor: Editor) => {
      editorRef.current = editor;
      const typed = textRef.current;
      if (typed === null) return;
      if (typed !== "") {
        firstEditRef.current?.();
        editor.chain().focus("start").insertContent(paragraphsOf(typed)).run();
      } else editor.commands.focus("start");
      type(null);
    },
    [type],
  );
  return { text, type, focusBody, onBodyReady };
}

function EditableBody({
  workspaceDoc,
  uuid,
  noteDoc,
  onFirstEdit,
  onReady,
}: {
  workspaceDoc: Y.Doc | null;
  uuid: string;
  noteDoc: Y.Doc;
  onFirstEdit: (() => void) | null;
  onReady: (editor: Editor) => void;
}) {
  // A new note not stored yet is stored by the first change to its text.
  useEffect(() => {
    if (!onFirstEdit) return;
    const onUpdate = (_update: Uint8Array, _origin: unknown, _doc: Y.Doc, transaction: Y.Transaction) => {
      if (transaction.local) onFirstEdit();
    };
    noteDoc.on("update", onUpdate);
    return () => noteDoc.off("update", onUpdate);
  }, [noteDoc, onFirstEdit]);
  // An edit made before the workspace document has loaded dates the note once it has.
  const [touchPending, setTouchPending] = useState(false);
  useTouchOnEdit(
    noteDoc,
    useCallback(() => (workspaceDoc ? touchNote(workspaceDoc, uuid) : setTouchPending(true)), [workspaceDoc, uuid]),
  );
  useEffect(() => {
    if (!touchPending || !workspaceDoc) return;
    setTouchPending(false);
    touchNote(workspaceDoc, uuid);
  }, [touchPending, workspaceDoc, uuid]);
  return (
    <Suspense fallback={<LoadingView />}>
      <LazyNoteBody noteDoc={noteDoc} onReady={onReady} />
    </Suspense>
  );
}
