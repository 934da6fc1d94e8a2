import { type NoteMeta, noteDocName } from "@tandem/core/documents";
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
  /** Called when the owner deletes the note here (it then closes). */
  readonly onDeleted: () => void;
  /** The snapshots panel beside the editor, when open (the notes view decides its width). */
  readonly snapshots: { readonly width: number; onResize(width: number): void; onClose(): void } | null;
  readonly onToggleSnapshots: () => void;
}

/** The open note: its header (title, folder, pin, snapshots, delete), the editor and, on demand, its snapshots. */
export function NoteEditor({ api, workspaceDoc, workspace, uuid, meta, onDeleted, snapshots, onToggleSnapshots }: NoteEditorProps) {
  const body = useYDoc(noteDocName(uuid));
  const article = useRef<HTMLElement>(null);
  const listed = workspace.notes.has(uuid);
  // Enter in the title goes on to the text, as in any notes app.
  const focusBody = () => article.current?.querySelector<HTMLElement>(".note-body-content")?.focus();
  return (
    <div className="note-editor">
      <article className="note-main" aria-label="Note" ref={article}>
        {listed ? (
          <NoteHeader
            workspaceDoc={workspaceDoc}
            workspace={workspace}
            uuid={uuid}
            meta={meta}
            snapshotsOpen={snapshots !== null}
            onToggleSnapshots={onToggleSnapshots}
            onTitleDone={focusBody}
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
        {body.status === "loading" && <LoadingView />}
        {body.status === "failed" && <ErrorNotice message={body.message} />}
        {body.status === "ready" && <EditableBody workspaceDoc={workspaceDoc} uuid={uuid} noteDoc={body.doc} />}
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

function EditableBody({ workspaceDoc, uuid, noteDoc }: { workspaceDoc: Y.Doc | null; uuid: string; noteDoc: Y.Doc }) {
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
      <LazyNoteBody noteDoc={noteDoc} />
    </Suspense>
  );
}
