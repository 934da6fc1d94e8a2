import type { NoteMeta } from "@tandem/core/documents";
import { useEffect, useRef, useState } from "react";
import type * as Y from "yjs";
import { ConfirmButton } from "../components/confirm-button";
import { deleteNote, moveNote, setNotePinned, setNoteTitle } from "./workspace-actions";
import { displayTitle, flattenTree, noteFolder, type Workspace } from "./workspace-model";

interface NoteHeaderProps {
  readonly workspaceDoc: Y.Doc;
  readonly workspace: Workspace;
  readonly uuid: string;
  readonly meta: NoteMeta;
  readonly snapshotsOpen: boolean;
  readonly onToggleSnapshots: () => void;
  /** Enter in the title: on to the text. */
  readonly onTitleDone: () => void;
}

const NO_FOLDER = "";

/** The open note's title and its metadata actions: folder, pin, snapshots, delete. */
export function NoteHeader({ workspaceDoc, workspace, uuid, meta, snapshotsOpen, onToggleSnapshots, onTitleDone }: NoteHeaderProps) {
  return (
    <div className="note-header">
      <TitleInput workspaceDoc={workspaceDoc} uuid={uuid} title={meta.title} onDone={onTitleDone} />
      <div className="note-actions">
        <label className="inline-field">
          <span>Folder</span>
          <select
            value={noteFolder(workspace, meta) ?? NO_FOLDER}
            onChange={(event) => moveNote(workspaceDoc, uuid, event.target.value === NO_FOLDER ? null : event.target.value)}
          >
            <option value={NO_FOLDER}>No folder</option>
            {flattenTree(workspace.tree).map((folder) => (
              <option key={folder.uuid} value={folder.uuid}>
                {`${"\u2002".repeat(folder.depth)}${folder.name}`}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => setNotePinned(workspaceDoc, uuid, !meta.pinned)}>
          {meta.pinned ? "Unpin" : "Pin"}
        </button>
        <button type="button" aria-expanded={snapshotsOpen} aria-controls="snapshots-panel" onClick={onToggleSnapshots}>
          Snapshots
        </button>
        <ConfirmButton
          label="Delete note"
          question={`Delete "${displayTitle(meta.title)}"?`}
          onConfirm={() => deleteNote(workspaceDoc, uuid)}
        />
      </div>
    </div>
  );
}

/**
 * The title, written to the workspace document as it is typed. While the field has focus it shows
 * what is typed; otherwise it follows the document (a rename elsewhere shows up here).
 */
function TitleInput({ workspaceDoc, uuid, title, onDone }: { workspaceDoc: Y.Doc; uuid: string; title: string; onDone: () => void }) {
  const [draft, setDraft] = useState(title);
  const focused = useRef(false);
  // A note opened without a title (just created) is waiting for one.
  const [wantsTitle] = useState(title === "");
  useEffect(() => {
    if (!focused.current) setDraft(title);
  }, [title]);
  return (
    <input
      className="note-title"
      aria-label="Title"
      placeholder="Untitled"
      dir="auto"
      // The server's limit for titles (MAX_NOTE_TITLE_LENGTH); a longer one would not show in its lists.
      maxLength={500}
      // biome-ignore lint/a11y/noAutofocus: a new note's first need is its title, as in any notes app.
      autoFocus={wantsTitle}
      value={draft}
      onFocus={() => {
        focused.current = true;
      }}
      onBlur={() => {
        focused.current = false;
        setDraft(title);
      }}
      onChange={(event) => {
        setDraft(event.target.value);
        setNoteTitle(workspaceDoc, uuid, event.target.value);
      }}
      onKeyDown={(event) => {
        if ((event.key === "Enter" || event.key === "ArrowDown") && !event.nativeEvent.isComposing) {
          event.preventDefault();
          onDone();
        }
      }}
    />
  );
}
