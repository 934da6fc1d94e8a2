import { type KeyboardEvent, useId, useMemo, useState } from "react";
import { ModalDialog } from "../components/modal-dialog";
import { displayTitle, type NoteItem, type Workspace } from "./workspace-model";

/** Titles shown at most; typing narrows them. */
const SHOWN = 50;

/** Notes whose title (or folder) contains every typed word, in the list's order (pinned, then recent). */
export function switcherMatches(notes: readonly NoteItem[], workspace: Workspace, query: string): NoteItem[] {
  const words = query.toLocaleLowerCase().split(/\s+/).filter(Boolean);
  return notes
    .filter((note) => {
      const folder = note.folder ? (workspace.folders.get(note.folder)?.name ?? "") : "";
      const haystack = `${note.title} ${folder}`.toLocaleLowerCase();
      return words.every((word) => haystack.includes(word));
    })
    .slice(0, SHOWN);
}

interface QuickSwitcherProps {
  readonly notes: readonly NoteItem[];
  readonly workspace: Workspace;
  readonly onOpen: (uuid: string) => void;
  /** Enter with no match: a new note with the typed title. */
  readonly onCreate: (title: string) => void;
  readonly onClose: () => void;
}

/** Go to a note by typing part of its title (Ctrl/Cmd+P or K): ↑ ↓ choose, Enter opens, Escape closes. */
export function QuickSwitcher({ notes, workspace, onOpen, onCreate, onClose }: QuickSwitcherProps) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const listId = useId();
  const matches = useMemo(() => switcherMatches(notes, workspace, query), [notes, workspace, query]);
  const current = Math.min(active, Math.max(0, matches.length - 1));
  const optionId = (index: number) => `${listId}-${index}`;

  const choose = (note: NoteItem | undefined) => {
    if (note) onOpen(note.uuid);
    else if (query.trim() !== "") onCreate(query.trim());
    else return;
    onClose();
  };
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
      {matches.length === 0 && (
        <p className="empty-state switcher-empty">
          {query.trim() === "" ? "No notes yet." : `No note is called that. Enter creates “${query.trim()}”.`}
        </p>
      )}
    </ModalDialog>
  );
}
