import { type Folder, relativeTime } from "@tandem/core";
import { type Kysely, sql } from "kysely";
import type { Schema } from "../db/schema";
import { listFolders } from "../folders/folders-service";

/** When a note last changed: its metadata or its body, whichever is later (portable SQL). */
export const noteUpdatedAt = sql<string>`case when note_bodies.updated_at > notes.updated_at then note_bodies.updated_at else notes.updated_at end`;

export interface WorkspaceTotals {
  folders: Folder[];
  totalFiles: number;
  totalSizeBytes: number;
  lastUpdatedAt: string | null;
}

/** Counts and sizes of a user's workspace, from the views. */
export async function workspaceTotals(db: Kysely<Schema>, ownerId: number): Promise<WorkspaceTotals> {
  const totals = await db
    .selectFrom("notes")
    .leftJoin("note_bodies", "note_bodies.uuid", "notes.uuid")
    .select([
      sql<number>`count(*)`.as("files"),
      sql<number>`coalesce(sum(note_bodies.size_bytes), 0)`.as("bytes"),
      sql<string | null>`max(${noteUpdatedAt})`.as("last"),
    ])
    .where("notes.owner_id", "=", ownerId)
    .executeTakeFirstOrThrow();
  return {
    folders: await listFolders(db, ownerId),
    totalFiles: Number(totals.files),
    totalSizeBytes: Number(totals.bytes),
    lastUpdatedAt: totals.last,
  };
}

const SUMMARY_CHARACTERS = 200;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

/** The most recently updated notes, each with the start of its text, and the list as HTML. */
export async function notesSummary(db: Kysely<Schema>, ownerId: number, limit: number) {
  const rows = await db
    .selectFrom("notes")
    .leftJoin("note_bodies", "note_bodies.uuid", "notes.uuid")
    .select([
      "notes.id",
      "notes.title",
      "notes.pinned",
      noteUpdatedAt.as("updated"),
      sql<string | null>`substr(note_bodies.text, 1, ${SUMMARY_CHARACTERS * 2})`.as("start"),
    ])
    .where("notes.owner_id", "=", ownerId)
    .orderBy("updated", "desc")
    .orderBy("notes.id", "desc")
    .limit(limit)
    .execute();
  const now = new Date();
  const notes = rows.map((row) => {
    const text = (row.start ?? "").replace(/\s+/g, " ").trim();
    return {
      id: row.id,
      title: row.title,
      summary: text.length > SUMMARY_CHARACTERS ? `${text.slice(0, SUMMARY_CHARACTERS - 1)}…` : text,
      updatedAt: row.updated,
      relativeTime: relativeTime(row.updated, now),
      pinned: row.pinned === 1,
    };
  });
  const items = notes.map(
    (n) =>
      `<li><strong>${escapeHtml(n.title)}</strong> <em>(${escapeHtml(n.relativeTime)})</em>${n.summary ? ` — ${escapeHtml(n.summary)}` : ""}</li>`,
  );
  return { notes, notesSummary: items.length ? `<ul>${items.join("")}</ul>` : "<p>No notes yet.</p>" };
}
