import { type NoteMeta, noteDocName } from "@tandem/core/documents";
import { useCallback, useState } from "react";
import type * as Y from "yjs";
import type { DesktopApi } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { useYDoc } from "../sync/use-document";
import { NoteBody } from "./note-body";
import { NoteHeader } from "./note-header";
import { SnapshotsPanel } from "./snapshots-panel";
import { useTouchOnEdit } from "./use-touch-on-edit";
import { recreateNote, restoreTrashed, touchNote } from "./workspace-actions";
import { isTrashedNote, type Workspace } from "./workspace-model";
import "./trash.css";

interface NoteEditorProps {
  readonly api: DesktopApi;
  readonly workspaceDoc: Y.Doc;
  readonly workspace: Workspace;
  readonly uuid: string;
  /** The note's entry, or, once another device trashed or deleted it, what this window last knew of it. */
  readonly meta: NoteMeta;
  /** Called when the owner deletes the note here (it then closes). */
  readonly onDeleted: () => void;
}

/** The open note: its header (title, folder, pin, snapshots, delete), the editor and, on demand, its snapshots. */
export function NoteEditor({ api, workspaceDoc, workspace, uuid, meta, onDeleted }: NoteEditorProps) {
  const body = useYDoc(noteDocName(uuid));
  const [snapshotsOpen, setSnapshotsOpen] = useState(false);
  const listed = workspace.notes.has(uuid);
  return (
    <div className={snapshotsOpen ? "note-editor with-snapshots" : "note-editor"}>
      <article className="note-main" aria-label="Note">
        {listed ? (
          <NoteHeader
            workspaceDoc={workspaceDoc}
            workspace={workspace}
            uuid={uuid}
            meta={meta}
            snapshotsOpen={snapshotsOpen}
            onToggleSnapshots={() => setSnapshotsOpen((open) => !open)}
            onDeleted={onDeleted}
          />
        ) : (
          <GoneBanner
            trashed={isTrashedNote(workspace, uuid)}
            title={meta.title}
            onRestore={() => (isTrashedNote(workspace, uuid) ? restoreTrashed(workspaceDoc, uuid) : recreateNote(workspaceDoc, uuid, meta))}
          />
        )}
        {body.status === "loading" && (
          <p className="empty-state" aria-busy="true">
            Loading…
          </p>
        )}
        {body.status === "failed" && <ErrorNotice message={body.message} />}
        {body.status === "ready" && <EditableBody workspaceDoc={workspaceDoc} uuid={uuid} noteDoc={body.doc} />}
      </article>
      {snapshotsOpen && <SnapshotsPanel api={api} noteUuid={uuid} onClose={() => setSnapshotsOpen(false)} />}
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

function EditableBody({ workspaceDoc, uuid, noteDoc }: { workspaceDoc: Y.Doc; uuid: string; noteDoc: Y.Doc }) {
  useTouchOnEdit(
    noteDoc,
    useCallback(() => touchNote(workspaceDoc, uuid), [workspaceDoc, uuid]),
  );
  return <NoteBody noteDoc={noteDoc} />;
}
