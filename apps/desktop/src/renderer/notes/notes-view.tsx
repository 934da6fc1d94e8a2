import { useEffect, useRef, useState } from "react";
import type * as Y from "yjs";
import type { DesktopApi } from "../../shared/desktop-api";
import { DocumentGate } from "../sync/document-gate";
import { useDocValue, useLocalSync } from "../sync/use-document";
import { FolderTree } from "./folder-tree";
import { NoteEditor } from "./note-editor";
import { NoteList } from "./note-list";
import { SearchBox, SearchResults } from "./note-search";
import { TrashList } from "./trash-list";
import { createNote } from "./workspace-actions";
import { ALL_NOTES, EMPTY_WORKSPACE, type FolderSelection, notesIn, readWorkspace } from "./workspace-model";
import "./notes.css";

/** Notes: folders, the selected folder's notes (or search results), and the open note. */
export function NotesView({ api }: { api: DesktopApi }) {
  const { workspaceDoc } = useLocalSync();
  return <DocumentGate name={workspaceDoc}>{(doc) => <NotesWorkspace api={api} doc={doc} />}</DocumentGate>;
}

function NotesWorkspace({ api, doc }: { api: DesktopApi; doc: Y.Doc }) {
  const workspace = useDocValue(doc, readWorkspace, EMPTY_WORKSPACE);
  const [selection, setSelection] = useState<FolderSelection>(ALL_NOTES);
  const [openNote, setOpenNote] = useState<string | null>(null);
  const [query, setQuery] = useState("");

  // A folder or note removed (here or on another device) leaves the view gracefully.
  const selectedGone = selection.kind === "folder" && !workspace.folders.has(selection.uuid);
  useEffect(() => {
    if (selectedGone) setSelection(ALL_NOTES);
  }, [selectedGone]);
  // A note trashed or deleted elsewhere while open stays in view (with its text) so it can be restored:
  // the editor keeps what it last knew of it.
  const openMeta = openNote === null ? undefined : workspace.notes.get(openNote);
  const lastKnown = useRef<{ uuid: string; meta: NonNullable<typeof openMeta> } | null>(null);
  if (openNote !== null && openMeta) lastKnown.current = { uuid: openNote, meta: openMeta };
  const shownMeta = openMeta ?? (lastKnown.current?.uuid === openNote ? lastKnown.current.meta : undefined);

  const folderName = selection.kind === "folder" ? workspace.folders.get(selection.uuid)?.name : undefined;
  const create = () => {
    setQuery("");
    setOpenNote(createNote(doc, selection.kind === "folder" ? selection.uuid : null));
  };

  return (
    <div className="notes-view">
      <FolderTree doc={doc} workspace={workspace} selection={selection} onSelect={setSelection} />
      <section className="list-pane" aria-label="Note list">
        <SearchBox query={query} onChange={setQuery} />
        {selection.kind === "trash" && query.trim() === "" ? (
          <TrashList doc={doc} items={workspace.trash} />
        ) : query.trim() === "" ? (
          <NoteList
            heading={folderName ?? "All notes"}
            notes={notesIn(workspace, selection)}
            openNote={openNote}
            onOpen={setOpenNote}
            onCreate={create}
          />
        ) : (
          <SearchResults api={api} query={query} onOpen={setOpenNote} />
        )}
      </section>
      <section className="editor-pane" aria-label="Editor">
        {openNote !== null && shownMeta ? (
          <NoteEditor
            key={openNote}
            api={api}
            workspaceDoc={doc}
            workspace={workspace}
            uuid={openNote}
            meta={shownMeta}
            onDeleted={() => setOpenNote(null)}
          />
        ) : (
          <p className="empty-state centered">Select a note, or create one.</p>
        )}
      </section>
    </div>
  );
}
