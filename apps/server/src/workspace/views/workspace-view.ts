import { effectiveParents, folderNameKey, readFolders, readNotes, withoutTrashed } from "@tandem/core";
import type { Kysely, Transaction } from "kysely";
import type * as Y from "yjs";
import type { Schema } from "../../db/schema";
import { bumpAccessEpoch } from "../../sync/access-epoch";
import { claimNotes } from "./note-ownership";
import { materializeNoteTitle } from "./note-view";

/**
 * Folder ids by uuid, and whether any folder or note left the place it had or a top-level folder
 * was renamed (either can end a share's reach).
 */
interface Materialized {
  ids: Map<string, number>;
  moved: boolean;
}

async function materializeFolders(tx: Transaction<Schema>, ownerId: number, doc: Y.Doc): Promise<Materialized> {
  // Trashed entries leave the views, and with them every listing, search and grep.
  const folders = withoutTrashed(readFolders(doc));
  const rows = await tx.selectFrom("folders").selectAll().where("owner_id", "=", ownerId).execute();
  const existing = new Map(rows.map((row) => [row.uuid, row]));
  const ids = new Map(rows.map((row) => [row.uuid, row.id]));

  // New folders first, so every parent has an id before parents are resolved. Each goes in with a
  // parent_key of its own (negative: no real id) until the pass below places it, so new folders of
  // one name under different new parents (`a/x`, `b/x`) do not collide at the root meanwhile.
  let placeholderKey = 0;
  for (const [uuid, meta] of folders) {
    if (ids.has(uuid)) continue;
    const inserted = await tx
      .insertInto("folders")
      .values({
        uuid,
        owner_id: ownerId,
        parent_id: null,
        parent_key: --placeholderKey,
        name: meta.name,
        name_key: folderNameKey(meta.name),
        icon: meta.icon,
        created_at: meta.createdAt,
        updated_at: meta.updatedAt,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    ids.set(uuid, inserted.id);
  }

  const parents = effectiveParents(folders);
  let moved = false;
  for (const [uuid, meta] of folders) {
    const parentUuid = parents.get(uuid) ?? null;
    const parentId = parentUuid === null ? null : (ids.get(parentUuid) ?? null);
    const wanted = {
      parent_id: parentId,
      parent_key: parentId ?? 0,
      name: meta.name,
      name_key: folderNameKey(meta.name),
      icon: meta.icon,
      created_at: meta.createdAt,
      updated_at: meta.updatedAt,
    };
    const row = existing.get(uuid);
    const changed = !row || (Object.keys(wanted) as (keyof typeof wanted)[]).some((key) => row[key] !== wanted[key]);
    // A top-level folder renamed may become (or stop being) Memory, which no share reaches.
    if (row && (row.parent_id !== parentId || (parentId === null && row.name_key !== wanted.name_key))) moved = true;
    if (changed) await tx.updateTable("folders").set(wanted).where("owner_id", "=", ownerId).where("uuid", "=", uuid).execute();
  }

  const removed = rows.filter((row) => !folders.has(row.uuid)).map((row) => row.uuid);
  if (removed.length > 0) {
    moved = true;
    await tx.deleteFrom("folders").where("owner_id", "=", ownerId).where("uuid", "in", removed).execute();
  }
  return { ids, moved };
}

async function materializeNotes(tx: Transaction<Schema>, ownerId: number, doc: Y.Doc, folderIds: Map<string, number>): Promise<boolean> {
  const notes = withoutTrashed(readNotes(doc));
  const rows = await tx.selectFrom("notes").selectAll().where("owner_id", "=", ownerId).execute();
  const existing = new Map(rows.map((row) => [row.uuid, row]));
  // A uuid this workspace lists but another user owns is theirs: it stays out of this user's views.
  const claimed = await claimNotes(
    tx,
    ownerId,
    [...notes.keys()].filter((uuid) => !existing.has(uuid)),
  );
  let moved = false;
  for (const [uuid, meta] of notes) {
    if (!existing.has(uuid) && !claimed.has(uuid)) continue;
    const wanted = {
      folder_id: meta.folder === null ? null : (folderIds.get(meta.folder) ?? null),
      title: meta.title,
      pinned: meta.pinned ? 1 : 0,
      tags: JSON.stringify(meta.tags),
      created_at: meta.createdAt,
      updated_at: meta.updatedAt,
    };
    const row = existing.get(uuid);
    if (!row) {
      await tx
        .insertInto("notes")
        .values({ uuid, owner_id: ownerId, ...wanted })
        .execute();
      await materializeNoteTitle(tx, uuid, meta.title, meta.createdAt);
    } else if ((Object.keys(wanted) as (keyof typeof wanted)[]).some((key) => row[key] !== wanted[key])) {
      if (row.folder_id !== wanted.folder_id) moved = true;
      await tx.updateTable("notes").set(wanted).where("uuid", "=", uuid).where("owner_id", "=", ownerId).execute();
      if (row.title !== meta.title) await materializeNoteTitle(tx, uuid, meta.title, meta.createdAt);
    }
  }
  const removed = rows.filter((row) => !notes.has(row.uuid)).map((row) => row.uuid);
  if (removed.length > 0) {
    moved = true;
    await tx.deleteFrom("notes").where("owner_id", "=", ownerId).where("uuid", "in", removed).execute();
  }
  return moved;
}

/**
 * Brings the folder and note views of one workspace in line with its document, atomically. When
 * a folder or note of a user who shares folders moved or went, someone may have lost access: the
 * access epoch moves, so open sync connections are checked again.
 */
export async function materializeWorkspace(db: Kysely<Schema>, ownerId: number, doc: Y.Doc): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const folders = await materializeFolders(tx, ownerId, doc);
    const notesMoved = await materializeNotes(tx, ownerId, doc, folders.ids);
    if (!folders.moved && !notesMoved) return;
    const shares = await tx.selectFrom("folder_shares").select("grantee_id").where("owner_id", "=", ownerId).limit(1).execute();
    if (shares.length > 0) await bumpAccessEpoch(tx);
  });
}
