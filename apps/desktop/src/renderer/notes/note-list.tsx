import { shortTime } from "./note-time";
import { displayTitle, type NoteItem } from "./workspace-model";

interface NoteListProps {
  readonly heading: string;
  readonly notes: readonly NoteItem[];
  readonly openNote: string | null;
  readonly onOpen: (uuid: string) => void;
  readonly onCreate: () => void;
}

/** The notes of the selected folder, pinned first, then the most recently changed. */
export function NoteList({ heading, notes, openNote, onOpen, onCreate }: NoteListProps) {
  return (
    <>
      <div className="pane-header">
        <h3>{heading}</h3>
        <button type="button" className="primary" onClick={onCreate}>
          New note
        </button>
      </div>
      {notes.length === 0 ? (
        <p className="empty-state">No notes yet.</p>
      ) : (
        <ul className="note-list" aria-label="Notes">
          {notes.map((note) => (
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
                  <span className={note.title.trim() === "" ? "untitled" : undefined}>{displayTitle(note.title)}</span>
                </span>
                <time className="note-item-time" dateTime={note.updatedAt}>
                  {shortTime(note.updatedAt)}
                </time>
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
