import {
  deleteFromTrash,
  emptyExpiredTrash,
  expiredTrash,
  readFolders,
  readNotes,
  restoreFromTrash,
  type TrashedItem,
  trashDeleteAfter,
  trashNote,
  workspaceDocName,
} from "@tandem/core";
import { nowIso } from "../../clock";
import type { AppContext } from "../../context";
import { notFound } from "../../http/errors";
import { getAccessibleNote } from "../notes/notes-service";

type TrashDeps = Pick<AppContext, "db" | "sync" | "clock">;

/**
 * Moves a note to the Trash of the workspace it lives in (an editor of a shared folder trashes
 * the owner's note into the owner's Trash, from where the owner may restore it).
 */
export async function moveNoteToTrash({ db, sync, clock }: TrashDeps, userId: number, noteId: number) {
  const { row } = await getAccessibleNote(db, userId, noteId, "write");
  // The server's clock, which the 30-day sweep goes by too.
  const trashedAt = clock.iso();
  await sync.change(workspaceDocName(row.owner_id), userId, (doc) => {
    // Trashed or deleted since the request was checked: nothing to move.
    if (readNotes(doc).get(row.uuid)?.trashedAt !== null) throw notFound(`note ${noteId}`);
    trashNote(doc, row.uuid, trashedAt);
  });
  return { uuid: row.uuid, trashedAt };
}

export async function listTrash({ sync }: TrashDeps, ownerId: number): Promise<TrashedItem[]> {
  const doc = await sync.getDoc(workspaceDocName(ownerId));
  const items: TrashedItem[] = [];
  for (const [uuid, meta] of readNotes(doc)) {
    if (meta.trashedAt !== null)
      items.push({ uuid, kind: "note", title: meta.title, trashedAt: meta.trashedAt, deleteAfter: trashDeleteAfter(meta.trashedAt) });
  }
  for (const [uuid, meta] of readFolders(doc)) {
    if (meta.trashedAt !== null)
      items.push({ uuid, kind: "folder", title: meta.name, trashedAt: meta.trashedAt, deleteAfter: trashDeleteAfter(meta.trashedAt) });
  }
  return items.sort((a, b) => (a.trashedAt < b.trashedAt ? 1 : a.trashedAt > b.trashedAt ? -1 : 0));
}

/** Takes an entry out of the owner's Trash; answers its kind and its (new) numeric id in the views. */
export async function restoreTrashed({ db, sync }: TrashDeps, ownerId: number, uuid: string) {
  const kind = await sync.change(workspaceDocName(ownerId), ownerId, (doc) => restoreFromTrash(doc, uuid, nowIso()));
  if (kind === null) throw notFound(`trashed item ${uuid}`);
  const table = kind === "note" ? "notes" : "folders";
  const row = await db.selectFrom(table).select("id").where("uuid", "=", uuid).where("owner_id", "=", ownerId).executeTakeFirst();
  return { kind, id: row?.id ?? null };
}

export async function deleteTrashedForever({ sync }: TrashDeps, ownerId: number, uuid: string): Promise<void> {
  const deleted = await sync.change(workspaceDocName(ownerId), ownerId, (doc) => deleteFromTrash(doc, uuid));
  if (!deleted) throw notFound(`trashed item ${uuid}`);
}

/** How often the Trash is swept: each sweep reads every workspace, and a day's precision is plenty. */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * A maintenance task that deletes, for good, what has been in any Trash longer than the
 * retention period; it sweeps at most once an hour, however often maintenance runs.
 */
export function trashSweeper({ db, sync, clock }: TrashDeps): () => Promise<number> {
  let lastSweepMs = Number.NEGATIVE_INFINITY;
  return async () => {
    if (clock.nowMs() - lastSweepMs < SWEEP_INTERVAL_MS) return 0;
    lastSweepMs = clock.nowMs();
    const now = clock.iso();
    let removed = 0;
    for (const { id } of await db.selectFrom("users").select("id").execute()) {
      const name = workspaceDocName(id);
      const due = expiredTrash(await sync.getDoc(name), now);
      if (due.notes.length + due.folders.length > 0) removed += await sync.change(name, id, (doc) => emptyExpiredTrash(doc, now));
    }
    return removed;
  };
}
