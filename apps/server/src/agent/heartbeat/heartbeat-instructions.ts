import { jsonToMarkdown, markdownToJson } from "@tandem/core";
import type { AppContext } from "../../context";
import { findFolderPath } from "../../workspace/folders/folders-service";
import { writeMemory } from "../../workspace/memory/memory-service";
import { MEMORY_FOLDER } from "../../workspace/memory/memory-tree";
import { findNoteByTitle, getNote } from "../../workspace/notes/notes-service";

/**
 * The heartbeat's checklist is the owner's note `Memory/Self/HEARTBEAT.md` (title HEARTBEAT in the
 * folder Memory/Self): editable as any note, synced to every device, and what each run follows.
 */

export const HEARTBEAT_NOTE_PATH = `${MEMORY_FOLDER}/Self/HEARTBEAT.md`;
const FOLDERS = [MEMORY_FOLDER, "Self"];
const TITLE = "HEARTBEAT";

/** The checklist a user starts with; written on the first run that finds none. */
export const DEFAULT_CHECKLIST = [
  "# Heartbeat checklist",
  "",
  "- Urgent email: anything that needs an answer today?",
  "- Calendar: anything in the next 2 hours?",
  "- Todos: anything overdue, or of high priority?",
  "- Summary: tell me what you found, even if all is well.",
  "",
].join("\n");

const normalise = (markdown: string) => markdown.replace(/\s+/g, " ").trim();
let defaultAsStored: string | undefined;
/**
 * The default as the note gives it back (Markdown goes through the editor's document model);
 * computed at its first use, not when the server loads this module.
 */
const defaultAsStoredOnce = () => {
  defaultAsStored ??= normalise(jsonToMarkdown(markdownToJson(DEFAULT_CHECKLIST)));
  return defaultAsStored;
};

export interface Instructions {
  readonly instructions: string;
  readonly isDefault: boolean;
  /** Null until the note exists. */
  readonly updatedAt: string | null;
  readonly noteId: number | null;
  readonly path: string;
}

export async function readInstructions(app: AppContext, ownerId: number): Promise<Instructions> {
  const folders = await findFolderPath(app.db, ownerId, FOLDERS);
  const noteId = folders ? await findNoteByTitle(app.db, ownerId, folders.at(-1) as number, TITLE) : undefined;
  if (noteId === undefined) {
    return { instructions: DEFAULT_CHECKLIST, isDefault: true, updatedAt: null, noteId: null, path: HEARTBEAT_NOTE_PATH };
  }
  const note = await getNote(app, ownerId, noteId);
  return {
    instructions: note.markdown,
    isDefault: normalise(note.markdown) === defaultAsStoredOnce(),
    updatedAt: note.updatedAt,
    noteId,
    path: HEARTBEAT_NOTE_PATH,
  };
}

/** Replaces the checklist (the note is created, with its folders, when missing). */
export async function writeInstructions(app: AppContext, ownerId: number, content: string): Promise<Instructions> {
  await writeMemory(app, ownerId, { path: "Self/HEARTBEAT.md", content, mode: "replace" }, "all");
  return readInstructions(app, ownerId);
}

/** The checklist a run follows; the default is written as the note when there is none. */
export async function ensureInstructions(app: AppContext, ownerId: number): Promise<Instructions> {
  const current = await readInstructions(app, ownerId);
  return current.noteId === null ? writeInstructions(app, ownerId, DEFAULT_CHECKLIST) : current;
}
