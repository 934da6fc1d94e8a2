import * as Y from "yjs";
import { folderNameKey } from "../folder-names";
import { putEntry } from "./entries";

/**
 * The `workspace:<userId>` document: two maps keyed by uuid, so an offline client can create,
 * rename and move folders and notes without asking the server for ids.
 *
 *   folders: uuid → Y.Map { name, parent (folder uuid | null), icon (string | null), createdAt, updatedAt, trashedAt,
 *                           movedOutFolders, movedOutNotes (uuid[]: what trashing it moved up, for the restore) }
 *   notes:   uuid → Y.Map { title, folder (folder uuid | null), pinned, tags (string[]), createdAt, updatedAt, trashedAt }
 *
 * `trashedAt` (ISO string, or absent / null) puts an entry in the Trash: it stays in the document,
 * so every replica agrees, but leaves every listing; restoring clears it. Deleting forever is
 * removing the key. Timestamps are ISO 8601 strings. Entries written by other clients
 * are read defensively: a field of the wrong type falls back to its default, never throws.
 */
export const FOLDERS_MAP = "folders";
export const NOTES_MAP = "notes";

export interface FolderMeta {
  name: string;
  parent: string | null;
  icon: string | null;
  createdAt: string;
  updatedAt: string;
  trashedAt: string | null;
}

export interface NoteMeta {
  title: string;
  folder: string | null;
  pinned: boolean;
  tags: string[];
  createdAt: string;
  updatedAt: string;
  trashedAt: string | null;
}

/** How long the Trash keeps an entry before it is deleted for good. */
export const TRASH_RETENTION_DAYS = 30;

const EPOCH = "1970-01-01T00:00:00.000Z";

function str(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

function nullableStr(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function entries(doc: Y.Doc, mapName: string): [string, Y.Map<unknown>][] {
  const result: [string, Y.Map<unknown>][] = [];
  doc.getMap<unknown>(mapName).forEach((value, key) => {
    if (value instanceof Y.Map) result.push([key, value as Y.Map<unknown>]);
  });
  return result;
}

export function readFolders(doc: Y.Doc): Map<string, FolderMeta> {
  const folders = new Map<string, FolderMeta>();
  for (const [uuid, entry] of entries(doc, FOLDERS_MAP)) {
    const createdAt = str(entry.get("createdAt"), EPOCH);
    folders.set(uuid, {
      name: str(entry.get("name"), "Untitled folder"),
      parent: nullableStr(entry.get("parent")),
      icon: nullableStr(entry.get("icon")),
      createdAt,
      updatedAt: str(entry.get("updatedAt"), createdAt),
      trashedAt: nullableStr(entry.get("trashedAt")),
    });
  }
  return folders;
}

export function readNotes(doc: Y.Doc): Map<string, NoteMeta> {
  const notes = new Map<string, NoteMeta>();
  for (const [uuid, entry] of entries(doc, NOTES_MAP)) {
    const createdAt = str(entry.get("createdAt"), EPOCH);
    const tags = entry.get("tags");
    notes.set(uuid, {
      title: str(entry.get("title"), ""),
      folder: nullableStr(entry.get("folder")),
      pinned: entry.get("pinned") === true,
      tags: Array.isArray(tags) ? tags.filter((t): t is string => typeof t === "string") : [],
      createdAt,
      updatedAt: str(entry.get("updatedAt"), createdAt),
      trashedAt: nullableStr(entry.get("trashedAt")),
    });
  }
  return notes;
}

/** The entries not in the Trash: what every listing shows. */
export function withoutTrashed<T extends { trashedAt: string | null }>(entries: ReadonlyMap<string, T>): Map<string, T> {
  return new Map([...entries].filter(([, meta]) => meta.trashedAt === null));
}

/** Whether the workspace lists a note, without reading every entry (authorisation does this per document). */
export function hasNote(doc: Y.Doc, uuid: string): boolean {
  return doc.getMap(NOTES_MAP).get(uuid) instanceof Y.Map;
}

/** Creates or updates a folder entry with the given fields (call inside a transaction). */
export function putFolder(doc: Y.Doc, uuid: string, fields: Partial<FolderMeta>): void {
  putEntry(doc, FOLDERS_MAP, uuid, fields);
}

/** Creates or updates a note entry with the given fields (call inside a transaction). */
export function putNote(doc: Y.Doc, uuid: string, fields: Partial<NoteMeta>): void {
  putEntry(doc, NOTES_MAP, uuid, fields);
}

export function removeFolder(doc: Y.Doc, uuid: string): void {
  doc.getMap(FOLDERS_MAP).delete(uuid);
}

/** Moves a folder's subfolders and notes up to its parent; answers where they went and how many moved. */
function moveContentsUp(doc: Y.Doc, uuid: string, now: string): { parent: string | null; movedFolders: number; movedNotes: number } {
  const folders = readFolders(doc);
  const parent = folders.get(uuid)?.parent ?? null;
  let movedFolders = 0;
  let movedNotes = 0;
  for (const [child, meta] of folders) {
    if (meta.parent === uuid) {
      putFolder(doc, child, { parent, updatedAt: now });
      movedFolders++;
    }
  }
  for (const [note, meta] of readNotes(doc)) {
    if (meta.folder === uuid) {
      putNote(doc, note, { folder: parent, updatedAt: now });
      movedNotes++;
    }
  }
  return { parent, movedFolders, movedNotes };
}

/**
 * Deletes a folder without losing anything: its subfolders and notes move up to its parent
 * (call inside a transaction). Answers where they went and how many moved.
 */
export function dissolveFolder(doc: Y.Doc, uuid: string, now: string): { parent: string | null; movedFolders: number; movedNotes: number } {
  const moved = moveContentsUp(doc, uuid, now);
  removeFolder(doc, uuid);
  return moved;
}

/**
 * Moves a folder to the Trash the way deleting did: its notes and subfolders move up to its
 * parent first, so nothing but the folder leaves the listings (call inside a transaction). The
 * folder keeps the uuids of what moved out, so restoring it puts them back.
 */
export function trashFolder(doc: Y.Doc, uuid: string, now: string): { parent: string | null; movedFolders: number; movedNotes: number } {
  const before = readFolders(doc);
  const folders = [...before].filter(([, meta]) => meta.parent === uuid).map(([child]) => child);
  const notes = [...readNotes(doc)].filter(([, meta]) => meta.folder === uuid).map(([note]) => note);
  const moved = moveContentsUp(doc, uuid, now);
  putEntry(doc, FOLDERS_MAP, uuid, { trashedAt: now, updatedAt: now, [MOVED_OUT_FOLDERS]: folders, [MOVED_OUT_NOTES]: notes });
  return moved;
}

/** Fields of a trashed folder entry: the subfolders and notes its trashing moved up to its parent. */
const MOVED_OUT_FOLDERS = "movedOutFolders";
const MOVED_OUT_NOTES = "movedOutNotes";

function uuidList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * Undoes what trashing folder `uuid` moved: each subfolder and note it moved up comes back into
 * it, unless it was moved elsewhere (or deleted) since, which is a later wish that wins.
 */
function moveContentsBack(doc: Y.Doc, uuid: string, now: string): void {
  const entry = doc.getMap<unknown>(FOLDERS_MAP).get(uuid);
  if (!(entry instanceof Y.Map)) return;
  const folders = readFolders(doc);
  const notes = readNotes(doc);
  // Where the trashing put them: the folder's parent, which stays as it was while it is trashed.
  const movedTo = folders.get(uuid)?.parent ?? null;
  for (const child of uuidList(entry.get(MOVED_OUT_FOLDERS))) {
    if (child !== uuid && folders.has(child) && folders.get(child)?.parent === movedTo)
      putFolder(doc, child, { parent: uuid, updatedAt: now });
  }
  for (const note of uuidList(entry.get(MOVED_OUT_NOTES))) {
    if (notes.has(note) && notes.get(note)?.folder === movedTo) putNote(doc, note, { folder: uuid, updatedAt: now });
  }
  entry.delete(MOVED_OUT_FOLDERS);
  entry.delete(MOVED_OUT_NOTES);
}

/** Moves a note to the Trash (call inside a transaction). */
export function trashNote(doc: Y.Doc, uuid: string, now: string): void {
  putNote(doc, uuid, { trashedAt: now, updatedAt: now });
}

/**
 * Takes a note or folder out of the Trash. Its folder (or parent) may have gone meanwhile (trashed
 * or deleted): then it comes back at the top level. A folder gets back the subfolders and notes
 * its trashing moved up (see trashFolder). Answers which kind it was, or null when the
 * Trash holds no such entry.
 */
export function restoreFromTrash(doc: Y.Doc, uuid: string, now: string): "note" | "folder" | null {
  const folders = readFolders(doc);
  const live = (folder: string | null) => folder !== null && folders.get(folder)?.trashedAt === null;
  const note = readNotes(doc).get(uuid);
  if (note?.trashedAt) {
    putNote(doc, uuid, { trashedAt: null, folder: live(note.folder) ? note.folder : null, updatedAt: now });
    return "note";
  }
  const folder = folders.get(uuid);
  if (folder?.trashedAt) {
    const parent = live(folder.parent) ? folder.parent : null;
    const siblings = new Set(
      [...withoutTrashed(folders).values()].filter((meta) => meta.parent === parent).map((meta) => folderNameKey(meta.name)),
    );
    // A folder made meanwhile may have taken its name: the restored one gets a number, like a copy.
    let name = folder.name;
    for (let n = 2; siblings.has(folderNameKey(name)); n++) name = `${folder.name} (${n})`;
    moveContentsBack(doc, uuid, now);
    putFolder(doc, uuid, { trashedAt: null, parent, name, updatedAt: now });
    return "folder";
  }
  return null;
}

/** Deletes a trashed note or folder for good; answers whether the Trash held it. */
export function deleteFromTrash(doc: Y.Doc, uuid: string): boolean {
  if (readNotes(doc).get(uuid)?.trashedAt) {
    removeNote(doc, uuid);
    return true;
  }
  if (readFolders(doc).get(uuid)?.trashedAt) {
    removeFolder(doc, uuid);
    return true;
  }
  return false;
}

/**
 * When the Trash deletes an entry trashed at `trashedAt` for good. A `trashedAt` that is not a
 * time (another client wrote it) counts as long ago, so such an entry never lingers.
 */
export function trashDeleteAfter(trashedAt: string): string {
  const trashed = Date.parse(trashedAt);
  return new Date((Number.isNaN(trashed) ? 0 : trashed) + TRASH_RETENTION_DAYS * 86_400_000).toISOString();
}

/** The uuids of the entries whose time in the Trash ran out by `now` (ISO). */
export function expiredTrash(doc: Y.Doc, now: string): { notes: string[]; folders: string[] } {
  const expired = ([, meta]: [string, { trashedAt: string | null }]) => meta.trashedAt !== null && trashDeleteAfter(meta.trashedAt) <= now;
  return {
    notes: [...readNotes(doc)].filter(expired).map(([uuid]) => uuid),
    folders: [...readFolders(doc)].filter(expired).map(([uuid]) => uuid),
  };
}

/** Deletes for good every entry whose time in the Trash ran out by `now` (ISO); answers how many went. */
export function emptyExpiredTrash(doc: Y.Doc, now: string): number {
  const { notes, folders } = expiredTrash(doc, now);
  for (const uuid of notes) removeNote(doc, uuid);
  for (const uuid of folders) removeFolder(doc, uuid);
  return notes.length + folders.length;
}

/**
 * The effective parent of each folder: its parent when that exists, else none (an orphan shows
 * at the top level). Concurrent offline moves can make a cycle; walking folders in uuid order,
 * the first folder found on a cycle is cut loose, so every replica (the server's views, every
 * client's tree) agrees.
 */
export function effectiveParents(folders: Map<string, FolderMeta>): Map<string, string | null> {
  const parents = new Map<string, string | null>();
  for (const [uuid, meta] of folders) parents.set(uuid, meta.parent !== null && folders.has(meta.parent) ? meta.parent : null);
  for (const uuid of [...folders.keys()].sort()) {
    const seen = new Set<string>([uuid]);
    let current = parents.get(uuid) ?? null;
    while (current !== null) {
      if (seen.has(current)) {
        parents.set(uuid, null);
        break;
      }
      seen.add(current);
      current = parents.get(current) ?? null;
    }
  }
  return parents;
}

export function removeNote(doc: Y.Doc, uuid: string): void {
  doc.getMap(NOTES_MAP).delete(uuid);
}
