import * as Y from "yjs";
import { putEntry } from "./entries";

/**
 * The `workspace:<userId>` document: two maps keyed by uuid, so an offline client can create,
 * rename and move folders and notes without asking the server for ids.
 *
 *   folders: uuid → Y.Map { name, parent (folder uuid | null), icon (string | null), createdAt, updatedAt }
 *   notes:   uuid → Y.Map { title, folder (folder uuid | null), pinned, tags (string[]), createdAt, updatedAt }
 *
 * Deleting is removing the key. Timestamps are ISO 8601 strings. Entries written by other clients
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
}

export interface NoteMeta {
  title: string;
  folder: string | null;
  pinned: boolean;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}

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
    });
  }
  return notes;
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

/**
 * Deletes a folder without losing anything: its subfolders and notes move up to its parent
 * (call inside a transaction). Answers where they went and how many moved.
 */
export function dissolveFolder(doc: Y.Doc, uuid: string, now: string): { parent: string | null; movedFolders: number; movedNotes: number } {
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
  removeFolder(doc, uuid);
  return { parent, movedFolders, movedNotes };
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
