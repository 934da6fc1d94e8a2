import { noteDocName } from "@tandem/core/documents";
import { useCallback, useState } from "react";
import type * as Y from "yjs";
import type { DesktopApi } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { useYDoc } from "../sync/use-document";
import { NoteBody } from "./note-body";
import { NoteHeader } from "./note-header";
import { SnapshotsPanel } from "./snapshots-panel";
import { useTouchOnEdit } from "./use-touch-on-edit";
import { touchNote } from "./workspace-actions";
import type { Workspace } from "./workspace-model";

interface NoteEditorProps {
  readonly api: DesktopApi;
  readonly workspaceDoc: Y.Doc;
  readonly workspace: Workspace;
  readonly uuid: string;
}

/** The open note: its header (title, folder, pin, snapshots, delete), the editor and, on demand, its snapshots. */
export function NoteEditor({ api, workspaceDoc, workspace, uuid }: NoteEditorProps) {
  const meta = workspace.notes.get(uuid);
  const body = useYDoc(noteDocName(uuid));
  const [snapshotsOpen, setSnapshotsOpen] = useState(false);
  if (!meta) return <p className="empty-state">This note was deleted.</p>;
  return (
    <div className={snapshotsOpen ? "note-editor with-snapshots" : "note-editor"}>
      <article className="note-main" aria-label="Note">
        <NoteHeader
          workspaceDoc={workspaceDoc}
          workspace={workspace}
          uuid={uuid}
          meta={meta}
          snapshotsOpen={snapshotsOpen}
          onToggleSnapshots={() => setSnapshotsOpen((open) => !open)}
        />
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

function EditableBody({ workspaceDoc, uuid, noteDoc }: { workspaceDoc: Y.Doc; uuid: string; noteDoc: Y.Doc }) {
  useTouchOnEdit(
    noteDoc,
    useCallback(() => touchNote(workspaceDoc, uuid), [workspaceDoc, uuid]),
  );
  return <NoteBody noteDoc={noteDoc} />;
}
