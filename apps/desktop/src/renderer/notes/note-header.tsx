import { type NoteMeta, titleLengthProblem } from "@tandem/core/documents";
import { useEffect, useRef, useState } from "react";
import type * as Y from "yjs";
import { ConfirmButton } from "../components/confirm-button";
import { deleteNote, moveNote, setNotePinned, setNoteTitle } from "./workspace-actions";
import { displayTitle, flattenTree, noteFolder, type Workspace } from "./workspace-model";

interface NoteHeaderProps {
  /** Null while the workspace document loads (the first view): the title and actions wait for it. */
  readonly workspaceDoc: Y.Doc | null;
  readonly workspace: Workspace;
  readonly uuid: string;
  readonly meta: NoteMeta;
  /** Set while the note is stored nowhere yet: stores it, before the first change (see note-editor.tsx). */
  readonly onFirstEdit: (() => void) | null;
  readonly snapshotsOpen: boolean;
  readonly onToggleSnapshots: () => void;
  /** Enter in the title: on to the text. */
  readonly onTitleDone: () => void;
  readonly onDeleted: () => void;
}

const NO_FOLDER = "";

/** The open note's title and its metadata actions: folder, pin, snapshots, delete. */
export function NoteHeader({
  workspaceDoc,
  workspace,
  uuid,
  meta,
  onFirstEdit,
  snapshotsOpen,
  onToggleSnapshots,
  onTitleDone,
  onDeleted,
}: NoteHeaderProps) {
  // Every change made here goes to a stored note.
  const edit = (change: (doc: Y.Doc) => void) => {
    if (!workspaceDoc) return;
    onFirstEdit?.();
    change(workspaceDoc);
  };
  return (
    <fieldset className="note-header" disabled={workspaceDoc === null} aria-busy={workspaceDoc === null}>
      <TitleInput title={meta.title} onTitle={(title) => edit((doc) => setNoteTitle(doc, uuid, title))} onDone={onTitleDone} />
      <div className="note-actions">
        <label className="inline-field">
          <span>Folder</span>
          <select
            value={noteFolder(workspace, meta) ?? NO_FOLDER}
            onChange={(event) => {
              const folder = event.target.value === NO_FOLDER ? null : event.target.value;
              edit((doc) => moveNote(doc, uuid, folder));
            }}
          >
            <option value={NO_FOLDER}>No folder</option>
            {flattenTree(workspace.tree).map((folder) => (
              <option key={folder.uuid} value={folder.uuid}>
                {`${"\u2002".repeat(folder.depth)}${folder.name}`}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => edit((doc) => setNotePinned(doc, uuid, !meta.pinned))}>
          {meta.pinned ? "Unpin" : "Pin"}
        </button>
        <button type="button" aria-expanded={snapshotsOpen} aria-controls="snapshots-panel" onClick={onToggleSnapshots}>
          Snapshots
        </button>
        <ConfirmButton
          label="Delete note"
          question={`Move "${displayTitle(meta.title)}" to the Trash?`}
          onConfirm={() => {
            if (!workspaceDoc) return;
            // A note never stored has nothing to move to the Trash: it just closes.
            if (!onFirstEdit) deleteNote(workspaceDoc, uuid);
            onDeleted();
          }}
        />
      </div>
    </fieldset>
  );
}

/**
 * The title, written to the workspace document as it is typed. While the field has focus it shows
 * what is typed; otherwise it follows the document (a rename elsewhere shows up here). A title over
 * the limit is not written (nor cut): the field says so until it is short enough.
 */
function TitleInput({
  title,
  onTitle,
  onDone,
}: {
  title: string;
  /** Writes the title to the workspace document (nothing while that is loading). */
  onTitle: (title: string) => void;
  onDone: () => void;
}) {
  const [draft, setDraft] = useState(title);
  const focused = useRef(false);
  // A note opened without a title (just created) is waiting for one.
  const [wantsTitle] = useState(title === "");
  useEffect(() => {
    if (!focused.current) setDraft(title);
  }, [title]);
  const problem = titleLengthProblem(draft);
  return (
    <div className="note-title-field">
      <input
        className="note-title"
        aria-label="Title"
        placeholder="Untitled"
        dir="auto"
        aria-invalid={problem !== null}
        aria-describedby={problem ? "note-title-problem" : undefined}
        // biome-ignore lint/a11y/noAutofocus: a new note's first need is its title, as in any notes app.
        autoFocus={wantsTitle}
        value={draft}
        onFocus={() => {
          focused.current = true;
        }}
        onBlur={() => {
          focused.current = false;
          // An over-long draft stays in the field to be shortened, rather than vanishing.
          if (!problem) setDraft(title);
        }}
        onChange={(event) => {
          setDraft(event.target.value);
          if (!titleLengthProblem(event.target.value)) onTitle(event.target.value);
        }}
        onKeyDown={(event) => {
          if ((event.key === "Enter" || event.key === "ArrowDown") && !event.nativeEvent.isComposing) {
            event.preventDefault();
            onDone();
          }
        }}
      />
      {problem && (
        <p id="note-title-problem" className="field-problem" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
