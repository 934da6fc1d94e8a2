import { type KeyboardEvent, useEffect, useId, useMemo, useState } from "react";
import { ModalDialog } from "../components/modal-dialog";
import { displayTitle, type NoteItem, type Workspace } from "./workspace-model";

/** Titles shown at most; typing narrows them. */
const SHOWN = 50;

/** Lower case, words separated by one space: how typed text and titles are compared. */
const normalized = (text: string) => text.toLocaleLowerCase().split(/\s+/).filter(Boolean).join(" ");

/**
 * Notes whose title (or folder) contains every typed word: the note titled exactly what was typed
 * first, then titles starting with it, then the rest, each group in the list's order (pinned, then
 * recent). So "Note 42" is first for "note 42", before "Note 242" and "Note 142".
 */
export function switcherMatches(notes: readonly NoteItem[], workspace: Workspace, query: string): NoteItem[] {
  const typed = normalized(query);
  const words = typed.split(" ").filter(Boolean);
  const found = notes.filter((note) => {
    const folder = note.folder ? (workspace.folders.get(note.folder)?.name ?? "") : "";
    const haystack = `${note.title} ${folder}`.toLocaleLowerCase();
    return words.every((word) => haystack.includes(word));
  });
  if (typed === "") return found.slice(0, SHOWN);
  const rank = (note: NoteItem) => {
    const title = normalized(note.title);
    return title === typed ? 0 : title.startsWith(typed) ? 1 : 2;
  };
  // Array.prototype.sort is stable: within a rank, the list's order stays.
  return found
    .map((note) => ({ note, rank: rank(note) }))
    .sort((a, b) => a.rank - b.rank)
    .slice(0, SHOWN)
    .map(({ note }) => note);
}

/**
 * What the switcher says when nothing matches (or while notes are still loading). `known`: the whole
 * list is there; `canCreate`: a note can be made now; `waiting`: Enter was pressed and is kept until
 * the note is found or can be made. Every sentence says what Enter does.
 */
function notice(query: string, known: boolean, canCreate: boolean, waiting: string | null, anyMatch: boolean): string | null {
  const title = query.trim();
  if (waiting !== null) {
    return known
      ? `“${waiting}” is created as soon as your notes are open.`
      : `Still loading your notes… “${waiting}” opens as soon as it is found, or is created if it is not there.`;
  }
  if (anyMatch) return known ? null : "Still loading your notes: more may match.";
  if (title === "") return known ? "No notes yet." : "Still loading your notes…";
  if (!known)
    return `No match among the notes loaded so far; the rest are still loading. Enter opens it once found, or creates “${title}”.`;
  return canCreate
    ? `No note is called that. Enter creates “${title}”.`
    : `No note is called that. Enter creates “${title}” once your notes are open.`;
}

interface QuickSwitcherProps {
  readonly notes: readonly NoteItem[];
  readonly workspace: Workspace;
  /**
   * False while only part of the list is known (the first screen of a start, before the whole
   * outline or the workspace document): what is known is searched, and the switcher says so.
   */
  readonly known: boolean;
  /** Whether a note can be made now (the workspace document is open). */
  readonly canCreate: boolean;
  readonly onOpen: (uuid: string) => void;
  /** Enter with no match: a new note with the typed title. */
  readonly onCreate: (title: string) => void;
  readonly onClose: () => void;
}

/** Go to a note by typing part of its title (Ctrl/Cmd+P or K): ↑ ↓ choose, Enter opens, Escape closes. */
export function QuickSwitcher({ notes, workspace, known, canCreate, onOpen, onCreate, onClose }: QuickSwitcherProps) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  /** A title Enter was pressed for before it could be found or made: done once it can be. */
  const [waiting, setWaiting] = useState<string | null>(null);
  const listId = useId();
  const matches = useMemo(() => switcherMatches(notes, workspace, query), [notes, workspace, query]);
  const current = Math.min(active, Math.max(0, matches.length - 1));
  const optionId = (index: number) => `${listId}-${index}`;

  const choose = (note: NoteItem | undefined) => {
    if (note) onOpen(note.uuid);
    else if (query.trim() === "") return;
    else if (known && canCreate) onCreate(query.trim());
    else return setWaiting(query.trim());
    onClose();
  };
  // Enter pressed while the list was loading: the first match once there is one, else a new note once one can be made.
  const found = waiting === null ? undefined : matches[0];
  const ready = waiting !== null && (found !== undefined || (known && canCreate));
  useEffect(() => {
    if (!ready || waiting === null) return;
    setWaiting(null);
    if (found) onOpen(found.uuid);
    else onCreate(waiting);
    onClose();
  }, [ready, waiting, found, onOpen, onCreate, onClose]);
  const said = notice(query, known, canCreate, waiting, matches.length > 0);
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    const moves: Record<string, number> = { ArrowDown: current + 1, ArrowUp: current - 1, Home: 0, End: matches.length - 1 };
    if (event.key in moves) {
      event.preventDefault();
      setActive(Math.max(0, Math.min(matches.length - 1, moves[event.key] ?? 0)));
    } else if (event.key === "Enter") {
      event.preventDefault();
      choose(matches[current]);
    }
  };

  return (
    <ModalDialog label="Go to note" className="quick-switcher" onClose={onClose}>
      <input
        role="combobox"
        aria-label="Go to note"
        aria-expanded="true"
        aria-controls={listId}
        aria-activedescendant={matches.length > 0 ? optionId(current) : undefined}
        aria-autocomplete="list"
        dir="auto"
        placeholder="Type a title…"
        // biome-ignore lint/a11y/noAutofocus: the switcher exists to be typed into.
        autoFocus
        value={query}
        onChange={(event) => {
          setQuery(event.target.value);
          setActive(0);
          setWaiting(null);
        }}
        onKeyDown={onKeyDown}
      />
      <div id={listId} role="listbox" aria-label="Matching notes" className="switcher-list">
        {matches.map((note, index) => {
          const folder = note.folder ? workspace.folders.get(note.folder)?.name : undefined;
          return (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the keys are handled by the combobox, which keeps the focus.
            <div
              key={note.uuid}
              id={optionId(index)}
              role="option"
              tabIndex={-1}
              aria-selected={index === current}
              className="switcher-option"
              onMouseMove={() => setActive(index)}
              onClick={() => choose(note)}
            >
              <span dir="auto" className={note.title.trim() === "" ? "untitled" : undefined}>
                {displayTitle(note.title)}
              </span>
              {folder && (
                <span dir="auto" className="switcher-folder">
                  {folder}
                </span>
              )}
            </div>
          );
        })}
      </div>
      {said !== null && (
        <p className="empty-state switcher-empty" role="status">
          {said}
        </p>
      )}
    </ModalDialog>
  );
}
