import {
  deleteFromTrash,
  hasNote,
  type NoteMeta,
  putFolder,
  putNote,
  restoreFromTrash,
  trashFolder,
  trashNote,
} from "@tandem/core/documents";
import type * as Y from "yjs";

/*
 * Every change the notes view makes to the workspace document. Each is one Yjs transaction, so the
 * local hub stores it and replicates it as one update; `updatedAt` is set on every change, as the
 * server's views expect (docs/sync.md).
 */

const now = () => new Date().toISOString();

/** Stores a new note's entry; `uuid` is given for a note opened before it was stored (see notes-view.tsx). */
export function createNote(doc: Y.Doc, folder: string | null, uuid: string = crypto.randomUUID()): string {
  const at = now();
  doc.transact(() => putNote(doc, uuid, { title: "", folder, pinned: false, tags: [], createdAt: at, updatedAt: at }));
  return uuid;
}

export function setNoteTitle(doc: Y.Doc, uuid: string, title: string): void {
  doc.transact(() => putNote(doc, uuid, { title, updatedAt: now() }));
}

/** After the body changed: the list sorts by `updatedAt`. */
export function touchNote(doc: Y.Doc, uuid: string): void {
  // A note deleted meanwhile (here or elsewhere) must not come back as an empty entry.
  if (!hasNote(doc, uuid)) return;
  doc.transact(() => putNote(doc, uuid, { updatedAt: now() }));
}

export function moveNote(doc: Y.Doc, uuid: string, folder: string | null): void {
  doc.transact(() => putNote(doc, uuid, { folder, updatedAt: now() }));
}

export function setNotePinned(doc: Y.Doc, uuid: string, pinned: boolean): void {
  doc.transact(() => putNote(doc, uuid, { pinned, updatedAt: now() }));
}

/** Deleting moves to the Trash: the entry stays in the document, marked, so every device agrees. */
export function deleteNote(doc: Y.Doc, uuid: string): void {
  doc.transact(() => trashNote(doc, uuid, now()));
}

export function createFolder(doc: Y.Doc, name: string, parent: string | null): string {
  const uuid = crypto.randomUUID();
  const at = now();
  doc.transact(() => putFolder(doc, uuid, { name: name.trim(), parent, icon: null, createdAt: at, updatedAt: at }));
  return uuid;
}

export function renameFolder(doc: Y.Doc, uuid: string, name: string): void {
  doc.transact(() => putFolder(doc, uuid, { name: name.trim(), updatedAt: now() }));
}

/** Moves a folder to the Trash; its notes and subfolders move up to its parent, as the server's REST delete does. */
export function deleteFolder(doc: Y.Doc, uuid: string): void {
  doc.transact(() => trashFolder(doc, uuid, now()));
}

/** Takes a note or folder out of the Trash (to the top level if its folder went meanwhile). */
export function restoreTrashed(doc: Y.Doc, uuid: string): void {
  doc.transact(() => restoreFromTrash(doc, uuid, now()));
}

export function deleteForever(doc: Y.Doc, uuid: string): void {
  doc.transact(() => deleteFromTrash(doc, uuid));
}

/**
 * Brings back a note that another device deleted for good while it was open here, from what this
 * window last knew of it; its body is still in this device's copy of the note document.
 */
export function recreateNote(doc: Y.Doc, uuid: string, meta: NoteMeta): void {
  doc.transact(() => putNote(doc, uuid, { ...meta, folder: null, trashedAt: null, updatedAt: now() }));
}
