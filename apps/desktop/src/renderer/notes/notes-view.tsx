import { hasNote, type NoteMeta } from "@tandem/core/documents";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type * as Y from "yjs";
import type { DesktopApi } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { ownerPause } from "../components/owner-pause";
import { useDocValue, useLocalSync, useYDoc } from "../sync/use-document";
import { FolderTree } from "./folder-tree";
import { preloadNoteBody } from "./lazy-note-body";
import { NoteEditor } from "./note-editor";
import { NoteList } from "./note-list";
import { SearchBox, SearchResults } from "./note-search";
import { layoutPanes, loadPreferences, type PanePreferences, type ResizablePane, savePreferences } from "./pane-layout";
import { PaneResizer } from "./pane-resizer";
import { QuickSwitcher } from "./quick-switcher";
import { keyLabel, SHORTCUTS, type ShortcutAction, shortcutFor } from "./shortcuts";
import { ShortcutsSheet } from "./shortcuts-sheet";
import { TrashList } from "./trash-list";
import { useElementWidth } from "./use-element-width";
import { useFirstView } from "./use-first-view";
import { useNotePreviews } from "./use-note-previews";
import { createNote, setNoteTitle } from "./workspace-actions";
import { ALL_NOTES, EMPTY_WORKSPACE, type FolderSelection, notesIn, readWorkspace, type Workspace } from "./workspace-model";
import "./notes.css";

/**
 * Notes: folders, the selected folder's notes (or search results), and the open note. At a start the
 * view shows the workspace's saved outline while its document loads (see use-first-view.ts): the
 * list and notes can be opened and read, and note bodies edited; titles, folders and new notes wait
 * for the document, a moment later.
 */
export function NotesView({ api }: { api: DesktopApi }) {
  const { workspaceDoc } = useLocalSync();
  const firstView = useFirstView(api);
  const live = useYDoc(firstView.openLive ? workspaceDoc : null);
  if (live.status === "failed") return <ErrorNotice message={live.message} />;
  const doc = live.status === "ready" ? live.doc : null;
  if (!doc && !firstView.outline) {
    return (
      <p className="empty-state" aria-busy="true">
        Loading…
      </p>
    );
  }
  // One element in both cases, so what the owner opened during the first view stays open.
  return <NotesWorkspace api={api} doc={doc} outline={firstView.outline} outlineComplete={firstView.outlineComplete} />;
}

/** When the editor's code is fetched after a start, if no note was opened before (see ownerPause). */
const EDITOR_PRELOAD_IDLE_MS = 300;
const EDITOR_PRELOAD_MAX_DELAY_MS = 2_000;

type SidePane = "folders" | "list";
/**
 * The modal open over the notes, a new object per opening: a dialog's close event may arrive after
 * the same dialog was opened again from the keyboard, and must then close only its own opening.
 */
type Dialog = { readonly kind: "switcher" | "shortcuts" } | null;
const openDialog = (kind: "switcher" | "shortcuts"): Dialog => ({ kind });

/**
 * A note begun with New note and not typed in yet. It is open, but stored nowhere: the first keystroke
 * in its title or text (or a folder or pin chosen for it) stores it, so a New note left untouched leaves
 * nothing behind, in the list or on the server.
 */
interface UnsavedNote {
  readonly uuid: string;
  readonly meta: NoteMeta;
}

const shortcutHint = (action: ShortcutAction) => keyLabel(SHORTCUTS.find((shortcut) => shortcut.action === action)?.label ?? "");

interface NotesWorkspaceProps {
  readonly api: DesktopApi;
  readonly doc: Y.Doc | null;
  readonly outline: Workspace | null;
  /** Whether the outline shown before the document loads holds every note, not just the first screen's. */
  readonly outlineComplete: boolean;
}

function NotesWorkspace({ api, doc, outline, outlineComplete }: NotesWorkspaceProps) {
  const workspace = useDocValue(doc, readWorkspace, outline ?? EMPTY_WORKSPACE);
  const [selection, setSelection] = useState<FolderSelection>(ALL_NOTES);
  const [openNote, setOpenNote] = useState<string | null>(null);
  const [unsaved, setUnsaved] = useState<UnsavedNote | null>(null);
  const [query, setQuery] = useState("");
  const [snapshotsOpen, setSnapshotsOpen] = useState(false);
  const [dialog, setDialog] = useState<Dialog>(null);
  const [preferences, setPreferences] = useState<PanePreferences>(loadPreferences);
  /** A collapsed pane shown over the editor for a moment, when there is no room beside it. */
  const [peek, setPeek] = useState<SidePane | null>(null);
  const panesRef = useRef<HTMLDivElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  const width = useElementWidth(panesRef);
  const layout = layoutPanes(width, preferences, snapshotsOpen && openNote !== null);

  useEffect(() => savePreferences(preferences), [preferences]);
  // The editor's code, once the owner pauses after the list has painted (see lazy-note-body.tsx).
  useEffect(() => {
    const stop = new AbortController();
    void ownerPause(EDITOR_PRELOAD_IDLE_MS, EDITOR_PRELOAD_MAX_DELAY_MS, stop.signal).then(() => stop.signal.aborted || preloadNoteBody());
    return () => stop.abort();
  }, []);

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
  const pendingNote = unsaved !== null && unsaved.uuid === openNote && !openMeta ? unsaved : null;
  const shownMeta = openMeta ?? pendingNote?.meta ?? (lastKnown.current?.uuid === openNote ? lastKnown.current.meta : undefined);
  // Another note opened: an unsaved one left untouched is simply forgotten.
  useEffect(() => {
    if (unsaved !== null && unsaved.uuid !== openNote) setUnsaved(null);
  }, [unsaved, openNote]);
  const storePending = useCallback(() => {
    if (!doc || !pendingNote || hasNote(doc, pendingNote.uuid)) return;
    createNote(doc, pendingNote.meta.folder, pendingNote.uuid);
  }, [doc, pendingNote]);

  const folderName = selection.kind === "folder" ? workspace.folders.get(selection.uuid)?.name : undefined;
  const allNotes = useMemo(() => notesIn(workspace, ALL_NOTES), [workspace]);
  const listed = useMemo(() => (selection.kind === "all" ? allNotes : notesIn(workspace, selection)), [workspace, selection, allNotes]);
  const previews = useNotePreviews(api, listed);

  const create = useCallback(
    (title?: string) => {
      if (!doc) return;
      setQuery("");
      setPeek(null);
      const folder = selection.kind === "folder" ? selection.uuid : null;
      if (title) {
        // Named in the quick switcher: typed already, so stored at once.
        const uuid = createNote(doc, folder);
        setNoteTitle(doc, uuid, title);
        setOpenNote(uuid);
        return;
      }
      const uuid = crypto.randomUUID();
      const at = new Date().toISOString();
      setUnsaved({ uuid, meta: { title: "", folder, pinned: false, tags: [], createdAt: at, updatedAt: at, trashedAt: null } });
      setOpenNote(uuid);
    },
    [doc, selection],
  );
  const open = (uuid: string) => {
    setOpenNote(uuid);
    if (peek === "list") setPeek(null);
  };

  const shown = (pane: SidePane) => layout[pane] > 0 || peek === pane;
  const toggle = useCallback(
    (pane: SidePane) => {
      const key = pane === "folders" ? "foldersOpen" : "listOpen";
      if (peek === pane) return setPeek(null);
      if (layout[pane] > 0) return setPreferences((current) => ({ ...current, [key]: false }));
      const wanted = { ...preferences, [key]: true };
      setPreferences(wanted);
      // No room beside a readable editor: show it over the editor until it is used or dismissed.
      if (layoutPanes(width, wanted, snapshotsOpen && openNote !== null)[pane] === 0) setPeek(pane);
    },
    [layout, peek, preferences, width, snapshotsOpen, openNote],
  );
  const resize = (pane: ResizablePane) => (value: number) =>
    setPreferences((current) => ({ ...current, widths: { ...current.widths, [pane]: value } }));

  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.isComposing) return;
      const action = event.defaultPrevented ? null : shortcutFor(event);
      if (action) {
        event.preventDefault();
        // Behind a modal dialog only the sheet's own key acts (it closes the sheet). What is open is read
        // from the page: Escape closes a native dialog at once, and its close event reaches the state later.
        const modal = document.querySelector<HTMLDialogElement>("dialog[open]");
        if (modal !== null && action !== "shortcuts") return;
        if (action === "newNote") create();
        else if (action === "quickSwitcher") setDialog(openDialog("switcher"));
        else if (action === "shortcuts") setDialog(modal?.classList.contains("shortcuts-sheet") ? null : openDialog("shortcuts"));
        else if (action === "focusSearch") {
          if (!shown("list")) toggle("list");
          // The box exists once the pane is rendered.
          requestAnimationFrame(() => searchRef.current?.focus());
        } else toggle(action === "toggleFolders" ? "folders" : "list");
        return;
      }
      // Escape closes the innermost panel; dialogs close themselves, and fields that use Escape
      // (search, folder names) stop it. The editor marks every Escape handled, so that is not checked.
      if (event.key === "Escape" && document.querySelector("dialog[open]") === null) {
        if (peek !== null) setPeek(null);
        else if (snapshotsOpen) setSnapshotsOpen(false);
      }
    };
    window.addEventListener("keydown", onKeyDown);
    return () => window.removeEventListener("keydown", onKeyDown);
  });

  const folderTree = shown("folders") && (
    <FolderTree
      doc={doc}
      workspace={workspace}
      selection={selection}
      onSelect={(next) => {
        setSelection(next);
        if (peek === "folders") setPeek(null);
      }}
      overlay={peek === "folders"}
      width={layout.folders || preferences.widths.folders}
    />
  );
  const folderPane =
    doc === null && folderTree ? (
      <fieldset className="pending-workspace" disabled aria-busy="true">
        {folderTree}
      </fieldset>
    ) : (
      folderTree
    );
  const listPane = shown("list") && (
    <section
      className={peek === "list" ? "list-pane pane-overlay" : "list-pane"}
      aria-label="Note list"
      style={{ width: layout.list || preferences.widths.list }}
    >
      <SearchBox ref={searchRef} query={query} onChange={setQuery} />
      {selection.kind === "trash" && query.trim() === "" ? (
        doc ? (
          <TrashList doc={doc} items={workspace.trash} />
        ) : (
          <p className="empty-state" aria-busy="true">
            Loading…
          </p>
        )
      ) : query.trim() === "" ? (
        <NoteList
          heading={folderName ?? "All notes"}
          notes={listed}
          workspace={workspace}
          showFolders={selection.kind === "all"}
          previews={previews}
          openNote={openNote}
          onOpen={open}
          onCreate={() => create()}
          createDisabled={doc === null}
        />
      ) : (
        <SearchResults api={api} query={query} onOpen={open} />
      )}
    </section>
  );

  return (
    <div className="notes-view">
      <div className="notes-toolbar" role="toolbar" aria-label="Notes layout">
        <button type="button" aria-pressed={shown("folders")} title={shortcutHint("toggleFolders")} onClick={() => toggle("folders")}>
          Folders
        </button>
        <button type="button" aria-pressed={shown("list")} title={shortcutHint("toggleList")} onClick={() => toggle("list")}>
          Note list
        </button>
        <span className="toolbar-spacer" />
        <button type="button" title={shortcutHint("quickSwitcher")} onClick={() => setDialog(openDialog("switcher"))}>
          Go to note…
        </button>
        <button type="button" title={shortcutHint("shortcuts")} onClick={() => setDialog(openDialog("shortcuts"))}>
          Shortcuts
        </button>
      </div>
      <div className="notes-panes" ref={panesRef}>
        {folderPane}
        {layout.folders > 0 && (
          <PaneResizer pane="folders" label="Resize the folders" width={layout.folders} onResize={resize("folders")} />
        )}
        {listPane}
        {layout.list > 0 && <PaneResizer pane="list" label="Resize the note list" width={layout.list} onResize={resize("list")} />}
        <section className="editor-pane" aria-label="Editor">
          {openNote !== null && shownMeta ? (
            <NoteEditor
              key={openNote}
              api={api}
              workspaceDoc={doc}
              workspace={workspace}
              uuid={openNote}
              meta={shownMeta}
              onFirstEdit={pendingNote ? storePending : null}
              onDeleted={() => setOpenNote(null)}
              snapshots={
                layout.snapshots > 0
                  ? { width: layout.snapshots, onResize: resize("snapshots"), onClose: () => setSnapshotsOpen(false) }
                  : null
              }
              onToggleSnapshots={() => setSnapshotsOpen((current) => !current)}
            />
          ) : (
            <div className="empty-state centered">
              <p>Select a note, or create one.</p>
              <p className="hint">
                New note <kbd>{shortcutHint("newNote")}</kbd> · Go to a note <kbd>{shortcutHint("quickSwitcher")}</kbd> · All shortcuts{" "}
                <kbd>{shortcutHint("shortcuts")}</kbd>
              </p>
            </div>
          )}
        </section>
      </div>
      {dialog?.kind === "switcher" && (
        <QuickSwitcher
          notes={allNotes}
          workspace={workspace}
          known={doc !== null || outlineComplete}
          canCreate={doc !== null}
          onOpen={open}
          onCreate={(title) => create(title)}
          onClose={() => setDialog((current) => (current === dialog ? null : current))}
        />
      )}
      {dialog?.kind === "shortcuts" && <ShortcutsSheet onClose={() => setDialog((current) => (current === dialog ? null : current))} />}
    </div>
  );
}
