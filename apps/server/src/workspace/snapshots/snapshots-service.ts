import { applyStoredState, jsonToHtml, jsonToMarkdown, noteDocName, readNoteBody } from "@tandem/core";
import { type Kysely, type Selectable, sql } from "kysely";
import * as Y from "yjs";
import { nowIso } from "../../clock";
import type { Schema, SnapshotsTable } from "../../db/schema";
import { notFound } from "../../http/errors";
import { isStackOverflow, repairState } from "../../sync/state-repair";
import type { SyncServer } from "../../sync/sync-server";
import { changeMeta, getAccessibleNote, type NoteRow, replaceBody } from "../notes/notes-service";

type SnapshotRow = Selectable<SnapshotsTable>;

interface Deps {
  db: Kysely<Schema>;
  sync: SyncServer;
}

function summary(row: SnapshotRow, noteId: number) {
  return { versionId: row.id, seq: row.seq, noteId, label: row.label, createdAt: row.created_at, wordCount: row.word_count };
}

/**
 * Saves the note's current document state, within the owner's quota. The next seq is computed
 * and inserted in one transaction; the unique (note, seq) index turns a lost race into a retry,
 * not a duplicate. The server's own (automatic) snapshots of the note are then thinned out.
 */
export async function takeSnapshot({ db, sync }: Deps, note: NoteRow, label: string | null, automatic: boolean) {
  const state = Y.encodeStateAsUpdate(await sync.getDoc(noteDocName(note.uuid)));
  await sync.quota.assertUserRoom(note.owner_id, state.length);
  const row = await insertSnapshot(db, note, label, automatic, state);
  if (automatic) await thinAutomaticSnapshots(db, note.uuid, Date.now());
  return summary(row, note.id);
}

async function insertSnapshot(db: Kysely<Schema>, note: NoteRow, label: string | null, automatic: boolean, state: Uint8Array) {
  for (let attempt = 0; ; attempt++) {
    try {
      const row = await db.transaction().execute(async (tx) => {
        const last = await tx
          .selectFrom("snapshots")
          .select(sql<number | null>`max(seq)`.as("seq"))
          .where("note_uuid", "=", note.uuid)
          .executeTakeFirstOrThrow();
        return tx
          .insertInto("snapshots")
          .values({
            note_uuid: note.uuid,
            owner_id: note.owner_id,
            seq: Number(last.seq ?? 0) + 1,
            label,
            state,
            word_count: Number(note.word_count),
            created_at: nowIso(),
            automatic: automatic ? 1 : 0,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
      });
      return row;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

export async function listSnapshots(db: Kysely<Schema>, ownerId: number, noteId: number, limit: number) {
  const { row: note } = await getAccessibleNote(db, ownerId, noteId, "read");
  const rows = await db
    .selectFrom("snapshots")
    .selectAll()
    .where("note_uuid", "=", note.uuid)
    .where("owner_id", "=", note.owner_id)
    .orderBy("seq", "desc")
    .limit(limit)
    .execute();
  const total = await db
    .selectFrom("snapshots")
    .select(sql<number>`count(*)`.as("n"))
    .where("note_uuid", "=", note.uuid)
    .where("owner_id", "=", note.owner_id)
    .executeTakeFirstOrThrow();
  return { noteId, snapshots: rows.map((row) => summary(row, noteId)), total: Number(total.n) };
}

async function findSnapshot(db: Kysely<Schema>, note: NoteRow, by: { seq?: number; versionId?: number }): Promise<SnapshotRow> {
  // Snapshots follow the note's owner: only theirs, whoever else ever listed the uuid.
  let query = db.selectFrom("snapshots").selectAll().where("note_uuid", "=", note.uuid).where("owner_id", "=", note.owner_id);
  query = by.seq !== undefined ? query.where("seq", "=", by.seq) : query.where("id", "=", by.versionId as number);
  const row = await query.executeTakeFirst();
  if (!row)
    throw notFound(by.seq !== undefined ? `snapshot seq ${by.seq} of note ${note.id}` : `snapshot ${by.versionId} of note ${note.id}`);
  return row;
}

/** A snapshot's body; a state Yjs runs out of stack on is repaired in memory first (snapshots never change). */
async function bodyOf(row: SnapshotRow) {
  try {
    const doc = new Y.Doc();
    applyStoredState(doc, row.state);
    return readNoteBody(doc);
  } catch (error) {
    if (!isStackOverflow(error)) throw error;
    const doc = new Y.Doc();
    applyStoredState(doc, await repairState(row.state));
    return readNoteBody(doc);
  }
}

export async function getSnapshot(db: Kysely<Schema>, ownerId: number, noteId: number, by: { seq?: number; versionId?: number }) {
  const { row: note } = await getAccessibleNote(db, ownerId, noteId, "read");
  const row = await findSnapshot(db, note, by);
  const body = await bodyOf(row);
  return { ...summary(row, noteId), content: jsonToHtml(body), markdown: jsonToMarkdown(body) };
}

/**
 * Restores by moving forward: snapshot the current state (so the restore can be undone), then
 * write the snapshot's content as a new change. Stored history is never rewound, so every peer,
 * including ones offline now, converges on the restored content. Like any other change of a body,
 * it dates the note in the workspace (`updatedAt`): that is what clients follow to re-read what a
 * note says (the desktop's list previews) and to order their lists.
 */
export async function restoreSnapshot(deps: Deps, ownerId: number, noteId: number, by: { seq?: number; versionId?: number }) {
  const { row: note } = await getAccessibleNote(deps.db, ownerId, noteId, "write");
  const target = await findSnapshot(deps.db, note, by);
  const backup = await takeSnapshot(deps, note, `Before restoring snapshot ${target.seq}`, true);
  await replaceBody(deps.sync, ownerId, note.uuid, await bodyOf(target));
  await changeMeta(deps.sync, note.owner_id, note.uuid, {});
  return { restoredSeq: target.seq, backupSeq: backup.seq };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Retention of automatic snapshots: every one from the last day; then the newest of each hour
 * for a week; after that the newest of each day. Snapshots a person took are never removed.
 */
export async function thinAutomaticSnapshots(db: Kysely<Schema>, noteUuid: string, now: number): Promise<void> {
  const older = await db
    .selectFrom("snapshots")
    .select(["id", "created_at"])
    .where("note_uuid", "=", noteUuid)
    .where("automatic", "=", 1)
    .where("created_at", "<", new Date(now - DAY_MS).toISOString())
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  const kept = new Set<string>();
  const doomed: number[] = [];
  for (const { id, created_at } of older) {
    // ISO timestamps: the first 13 characters name the hour, the first 10 the day.
    const bucket = Date.parse(created_at) >= now - 7 * DAY_MS ? created_at.slice(0, 13) : created_at.slice(0, 10);
    if (kept.has(bucket)) doomed.push(id);
    else kept.add(bucket);
  }
  for (let i = 0; i < doomed.length; i += 500) {
    await db
      .deleteFrom("snapshots")
      .where("id", "in", doomed.slice(i, i + 500))
      .execute();
  }
}
