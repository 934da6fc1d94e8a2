import { randomUUID } from "node:crypto";
import {
  jsonToHtml,
  jsonToMarkdown,
  markdownToJson,
  type NoteListItem,
  noteDocName,
  putNote,
  readNoteBody,
  readNotes,
  textToJson,
  updateContentToJson,
  workspaceDocName,
  writeNoteBody,
} from "@tandem/core";
import type { JSONContent } from "@tiptap/core";
import { type Kysely, type Selectable, sql } from "kysely";
import * as Y from "yjs";
import { nowIso } from "../../clock";
import type { NotesTable, Schema } from "../../db/schema";
import { badRequest, notFound } from "../../http/errors";
import { type Role, requireWrite, sharedFolders } from "../../people/sharing/access";
import { bodyBytes, quotaError } from "../../sync/storage-quota";
import type { SyncServer } from "../../sync/sync-server";
import { type ChosenFolder, chooseFolder } from "./folder-choice";
import { noteUpdatedAt } from "./notes-stats";

export type NoteRow = Selectable<NotesTable> & { word_count: number; size_bytes: number; body_updated_at: string | null };

interface NotesDeps {
  db: Kysely<Schema>;
  sync: SyncServer;
}

function notesWithBodies(db: Kysely<Schema>) {
  return db
    .selectFrom("notes")
    .leftJoin("note_bodies", "note_bodies.uuid", "notes.uuid")
    .selectAll("notes")
    .select([
      sql<number>`coalesce(note_bodies.word_count, 0)`.as("word_count"),
      sql<number>`coalesce(note_bodies.size_bytes, 0)`.as("size_bytes"),
      "note_bodies.updated_at as body_updated_at",
    ]);
}

/** A note is updated when its metadata or its body last changed, whichever is later. */
function updatedAt(row: NoteRow): string {
  return row.body_updated_at && row.body_updated_at > row.updated_at ? row.body_updated_at : row.updated_at;
}

export function toListItem(row: NoteRow): NoteListItem {
  return {
    id: row.id,
    uuid: row.uuid,
    title: row.title,
    folderId: row.folder_id,
    wordCount: Number(row.word_count),
    pinned: row.pinned === 1,
    tags: JSON.parse(row.tags) as string[],
    createdAt: row.created_at,
    updatedAt: updatedAt(row),
  };
}

export interface NoteAccess {
  row: NoteRow;
  role: Role;
}

/**
 * A note the user may read (owner, or in a folder shared with them) or write (owner or editor);
 * a 404 for any other note, a 403 for a viewer who tries to write.
 */
export async function getAccessibleNote(db: Kysely<Schema>, userId: number, noteId: number, access: "read" | "write"): Promise<NoteAccess> {
  const row = await notesWithBodies(db).where("notes.id", "=", noteId).executeTakeFirst();
  if (!row) throw notFound(`note ${noteId}`);
  if (row.owner_id === userId) return { row, role: "owner" };
  const shared = row.folder_id === null ? undefined : (await sharedFolders(db, userId)).get(row.folder_id);
  if (!shared) throw notFound(`note ${noteId}`);
  if (access === "write") requireWrite(shared.role, `note ${noteId}`);
  return { row, role: shared.role };
}

/** A note the user owns, or a 404, also for another owner's note. */
export async function getOwnedNote(db: Kysely<Schema>, ownerId: number, noteId: number): Promise<NoteRow> {
  const row = await notesWithBodies(db).where("notes.id", "=", noteId).where("notes.owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound(`note ${noteId}`);
  return row;
}

export async function listNotes(
  db: Kysely<Schema>,
  ownerId: number,
  query: { folderId?: number; folderName?: string; limit: number },
): Promise<{ folder: ChosenFolder | null; notes: NoteListItem[]; totalNotes: number; limited: boolean }> {
  const folder = await chooseFolder(db, ownerId, query, "read");
  let rows = notesWithBodies(db).where("notes.owner_id", "=", folder?.ownerId ?? ownerId);
  rows = folder ? rows.where("notes.folder_id", "=", folder.id) : rows.where("notes.folder_id", "is", null);
  const page = await rows
    .orderBy("notes.pinned", "desc")
    .orderBy(noteUpdatedAt, "desc")
    .orderBy("notes.id", "desc")
    .limit(query.limit)
    .execute();
  let count = db
    .selectFrom("notes")
    .select(sql<number>`count(*)`.as("n"))
    .where("owner_id", "=", folder?.ownerId ?? ownerId);
  count = folder ? count.where("folder_id", "=", folder.id) : count.where("folder_id", "is", null);
  const totalNotes = Number((await count.executeTakeFirstOrThrow()).n);
  return { folder, notes: page.map(toListItem), totalNotes, limited: totalNotes > page.length };
}

/** Notes in any of `folderIds` (the owner's), and at the root too with `root`, most recently updated first. */
export async function listNotesInFolders(
  db: Kysely<Schema>,
  ownerId: number,
  folderIds: readonly number[],
  limit: number,
  root = false,
): Promise<NoteListItem[]> {
  const inFolders = [...folderIds, -1];
  const rows = await notesWithBodies(db)
    .where("notes.owner_id", "=", ownerId)
    .where((eb) =>
      root ? eb.or([eb("notes.folder_id", "in", inFolders), eb("notes.folder_id", "is", null)]) : eb("notes.folder_id", "in", inFolders),
    )
    .orderBy(noteUpdatedAt, "desc")
    .orderBy("notes.id", "desc")
    .limit(limit)
    .execute();
  return rows.map(toListItem);
}

/** The id of the owner's note titled exactly `title` in a folder (null: the root); of two, the older. */
export async function findNoteByTitle(db: Kysely<Schema>, ownerId: number, folderId: number | null, title: string) {
  let query = db.selectFrom("notes").select("id").where("owner_id", "=", ownerId).where("title", "=", title);
  query = folderId === null ? query.where("folder_id", "is", null) : query.where("folder_id", "=", folderId);
  return (await query.orderBy("id").executeTakeFirst())?.id;
}

export interface CreatedNote {
  id: number;
  uuid: string;
  title: string;
  folderId: number | null;
}

export async function createNoteFromJson(
  { db, sync }: NotesDeps,
  ownerId: number,
  input: { title: string; body: JSONContent; folder: ChosenFolder | null; tags: string[]; pinned?: boolean },
): Promise<CreatedNote> {
  const uuid = randomUUID();
  const now = nowIso();
  // A note made in a folder shared with the caller belongs to the folder's owner.
  const workspaceOwner = input.folder?.ownerId ?? ownerId;
  await sync.quota.assertRoom(noteDocName(uuid), bodyBytes(input.body), workspaceOwner);
  // The body first: once the workspace lists the note, clients open its document.
  await sync.change(noteDocName(uuid), ownerId, (doc) => writeNoteBody(doc, input.body));
  await sync.change(workspaceDocName(workspaceOwner), ownerId, (doc) =>
    putNote(doc, uuid, {
      title: input.title,
      folder: input.folder?.uuid ?? null,
      pinned: input.pinned ?? false,
      tags: input.tags,
      createdAt: now,
      updatedAt: now,
    }),
  );
  const row = await db.selectFrom("notes").select(["id", "folder_id"]).where("uuid", "=", uuid).executeTakeFirstOrThrow();
  return { id: row.id, uuid, title: input.title, folderId: row.folder_id };
}

export async function createNote(
  deps: NotesDeps,
  ownerId: number,
  input: { title: string; content: string; format: "markdown" | "text"; tags?: string[]; folderId?: number | null; folderName?: string },
): Promise<CreatedNote> {
  const folder = await chooseFolder(deps.db, ownerId, input);
  const body = input.format === "text" ? textToJson(input.content) : markdownToJson(input.content);
  return createNoteFromJson(deps, ownerId, { title: input.title, body, folder, tags: input.tags ?? [] });
}

/** The note's body, read from its live document or from storage. */
export async function readBody(sync: SyncServer, uuid: string): Promise<JSONContent> {
  return readNoteBody(await sync.getDoc(noteDocName(uuid)));
}

export async function getNote({ db, sync }: NotesDeps, userId: number, noteId: number) {
  const { row, role } = await getAccessibleNote(db, userId, noteId, "read");
  const body = await readBody(sync, row.uuid);
  return {
    ...toListItem(row),
    docName: noteDocName(row.uuid),
    content: jsonToHtml(body),
    markdown: jsonToMarkdown(body),
    sizeBytes: Number(row.size_bytes),
    shared: role !== "owner",
    role,
  };
}

const isEmptyParagraph = (node: JSONContent) => node.type === "paragraph" && (node.content?.length ?? 0) === 0;

/** `current` followed by `addition`; the empty paragraphs an empty or freshly ended body carries at its end are dropped. */
export function appendedBody(current: JSONContent, addition: JSONContent): JSONContent {
  const kept = [...(current.content ?? [])];
  while (kept.length > 0 && isEmptyParagraph(kept.at(-1) as JSONContent)) kept.pop();
  return { ...current, content: [...kept, ...(addition.content ?? [])] };
}

/** Changes metadata fields of a note in the workspace document, stamping `updatedAt`. */
export async function changeMeta(sync: SyncServer, ownerId: number, uuid: string, fields: Parameters<typeof putNote>[2]): Promise<void> {
  await sync.change(workspaceDocName(ownerId), ownerId, (doc) => {
    // A note deleted since the request was checked stays deleted.
    if (!readNotes(doc).has(uuid)) throw notFound("note");
    putNote(doc, uuid, { ...fields, updatedAt: nowIso() });
  });
}

/** Replaces a note's body with HTML, as a diff against the current body so concurrent edits survive. */
export async function replaceBody(sync: SyncServer, ownerId: number, uuid: string, body: JSONContent): Promise<void> {
  const name = noteDocName(uuid);
  const owner = await sync.quota.ownerOf(name);
  const refusal = owner === undefined ? undefined : await sync.quota.userRefusal(owner, bodyBytes(body));
  if (refusal) throw quotaError(refusal);
  await sync.change(name, ownerId, (doc) => {
    // Judged by the note it makes, not by the bytes it adds: a full note can still be replaced by a shorter body.
    if (sizeAfterReplacing(doc, body) > sync.quota.limits.maxDocumentBytes) throw quotaError("document_too_large");
    writeNoteBody(doc, body);
  });
}

/** The stored size of `doc` once its body is `body`, tried on a copy (a Yjs change cannot be taken back). */
function sizeAfterReplacing(doc: Y.Doc, body: JSONContent): number {
  const trial = new Y.Doc();
  try {
    Y.applyUpdate(trial, Y.encodeStateAsUpdate(doc));
    writeNoteBody(trial, body);
    return Y.encodeStateAsUpdate(trial).length;
  } finally {
    trial.destroy();
  }
}

export async function updateNote(
  deps: NotesDeps,
  ownerId: number,
  noteId: number,
  input: { title?: string; content?: string; tags?: string[] },
  beforeBodyChange: (row: NoteRow) => Promise<void>,
): Promise<void> {
  const { row } = await getAccessibleNote(deps.db, ownerId, noteId, "write");
  if (input.content !== undefined) {
    const body = updateContentToJson(input.content);
    await beforeBodyChange(row);
    await replaceBody(deps.sync, ownerId, row.uuid, body);
  }
  await changeMeta(deps.sync, row.owner_id, row.uuid, { title: input.title, tags: input.tags });
}

export async function copyNote(
  deps: NotesDeps,
  ownerId: number,
  noteId: number,
  target: { folderId?: number | null; folderName?: string },
) {
  const row = await getOwnedNote(deps.db, ownerId, noteId);
  const folder =
    target.folderId !== undefined || target.folderName !== undefined
      ? await chooseFolder(deps.db, ownerId, target)
      : row.folder_id === null
        ? null
        : await chooseFolder(deps.db, ownerId, { folderId: row.folder_id });
  const body = await readBody(deps.sync, row.uuid);
  return createNoteFromJson(deps, ownerId, { title: row.title, body, folder, tags: JSON.parse(row.tags) as string[] });
}

export async function moveNote(
  deps: NotesDeps,
  ownerId: number,
  noteId: number,
  target: { folderId?: number | null; folderName?: string },
) {
  const { row } = await getAccessibleNote(deps.db, ownerId, noteId, "write");
  const folder = await chooseFolder(deps.db, ownerId, target);
  // A note lives in its owner's workspace; moving it into someone else's is a copy, not a move.
  if ((folder?.ownerId ?? ownerId) !== row.owner_id) {
    throw badRequest("cross_workspace_move", "The destination belongs to another workspace; copy the note there instead");
  }
  await changeMeta(deps.sync, row.owner_id, row.uuid, { folder: folder?.uuid ?? null });
  return folder;
}

export async function pinNote(deps: NotesDeps, ownerId: number, noteId: number, pinned: boolean): Promise<void> {
  const { row } = await getAccessibleNote(deps.db, ownerId, noteId, "write");
  await changeMeta(deps.sync, row.owner_id, row.uuid, { pinned });
}
