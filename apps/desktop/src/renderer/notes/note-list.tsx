import { type KeyboardEvent, useEffect, useRef, useState } from "react";
import { shortTime } from "./note-time";
import { displayTitle, type NoteItem, type Workspace } from "./workspace-model";

interface NoteListProps {
  readonly heading: string;
  readonly notes: readonly NoteItem[];
  readonly workspace: Workspace;
  /** "All notes": each row names its folder. */
  readonly showFolders: boolean;
  /** The first words of each note's text, by uuid (from this device's copies). */
  readonly previews: ReadonlyMap<string, string>;
  readonly openNote: string | null;
  readonly onOpen: (uuid: string) => void;
  readonly onCreate: () => void;
  /** Set while notes cannot be created yet (the workspace document is loading). */
  readonly createDisabled?: boolean;
}

const ROW_KEYS = new Set(["ArrowDown", "ArrowUp", "Home", "End"]);
/**
 * Rows rendered at first, and added each time the list is scrolled near its end: a folder of
 * twenty thousand notes would otherwise cost seconds of layout before anything shows.
 */
const FIRST_ROWS = 200;
const MORE_ROWS = 500;

/** How many rows to render: more as the sentinel after the last one scrolls into view. */
function useRowsShown(total: number, heading: string) {
  const [shown, setShown] = useState(FIRST_ROWS);
  const sentinel = useRef<HTMLLIElement>(null);
  // Another folder's list starts from its top again.
  useEffect(() => setShown(FIRST_ROWS), [heading]);
  const more = total > shown;
  useEffect(() => {
    const element = sentinel.current;
    if (!more || !element) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) setShown((current) => current + MORE_ROWS);
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [more]);
  return { shown, sentinel: more ? sentinel : null };
}

/**
 * ↑ ↓ Home End move through the rows and open the note reached, as in a mail or notes app's list.
 * The rows stay buttons (Tab reaches them, Enter opens them).
 */
function moveThroughRows(event: KeyboardEvent<HTMLUListElement>) {
  if (!ROW_KEYS.has(event.key) || event.altKey || event.ctrlKey || event.metaKey) return;
  const rows = [...event.currentTarget.querySelectorAll<HTMLButtonElement>("button.note-item")];
  const at = rows.indexOf(document.activeElement as HTMLButtonElement);
  if (at === -1) return;
  const next = event.key === "Home" ? 0 : event.key === "End" ? rows.length - 1 : at + (event.key === "ArrowDown" ? 1 : -1);
  const row = rows[Math.max(0, Math.min(rows.length - 1, next))];
  event.preventDefault();
  row?.focus();
  row?.click();
}

/** The notes of the selected folder, pinned first, then the most recently changed. */
export function NoteList({
  heading,
  notes,
  workspace,
  showFolders,
  previews,
  openNote,
  onOpen,
  onCreate,
  createDisabled = false,
}: NoteListProps) {
  const { shown, sentinel } = useRowsShown(notes.length, heading);
  return (
    <>
      <div className="pane-header">
        <h3 dir="auto" title={heading}>
          {heading}
        </h3>
        <button type="button" className="primary" onClick={onCreate} disabled={createDisabled}>
          New note
        </button>
      </div>
      {notes.length === 0 ? (
        <p className="empty-state">No notes yet.</p>
      ) : (
        <ul className="note-list" aria-label="Notes" onKeyDown={moveThroughRows}>
          {notes.slice(0, shown).map((note) => {
            const folder = showFolders && note.folder ? workspace.folders.get(note.folder)?.name : undefined;
            const preview = previews.get(note.uuid);
            return (
              <li key={note.uuid}>
                <button
                  type="button"
                  className="note-item"
                  aria-current={note.uuid === openNote ? "true" : undefined}
                  onClick={() => onOpen(note.uuid)}
                >
                  <span className="note-item-title">
                    {note.pinned && (
                      <span className="pin-mark" title="Pinned">
                        Pinned
                      </span>
                    )}
                    <span dir="auto" className={note.title.trim() === "" ? "untitled" : undefined}>
                      {displayTitle(note.title)}
                    </span>
                  </span>
                  {preview && (
                    <span className="note-item-preview" dir="auto">
                      {preview}
                    </span>
                  )}
                  <span className="note-item-meta">
                    <time dateTime={note.updatedAt}>{shortTime(note.updatedAt)}</time>
                    {folder && (
                      <span className="note-item-folder" dir="auto">
                        {folder}
                      </span>
                    )}
                  </span>
                </button>
              </li>
            );
          })}
          {sentinel && <li ref={sentinel} className="note-list-more" aria-hidden="true" />}
        </ul>
      )}
    </>
  );
}
