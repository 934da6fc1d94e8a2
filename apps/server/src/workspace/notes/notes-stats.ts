import { type Folder, relativeTime } from "@tandem/core";
import { type Kysely, sql } from "kysely";
import type { Schema } from "../../db/schema";
import { escapeHtml } from "../../http/escape-html";
import { listFolders } from "../folders/folders-service";
import { extractiveSummary } from "./extractive-summary";

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

/** A note summary: its two most informative sentences, within this many characters. */
const SUMMARY = { sentences: 2, maxChars: 300 };
/** The part of a note's text its summary is chosen from: a long note's opening says what it is about. */
export const SUMMARISED_CHARACTERS = 20_000;

/**
 * A user's notes, most recently changed first (last changed within `since` … before `until`, when
 * given), with the first {@link SUMMARISED_CHARACTERS} of their text and how many notes matched in all.
 */
export async function recentNotes(
  db: Kysely<Schema>,
  ownerId: number,
  { limit, since, until }: { limit: number; since?: string; until?: string },
) {
  let query = db
    .selectFrom("notes")
    .leftJoin("note_bodies", "note_bodies.uuid", "notes.uuid")
    .select([
      "notes.id",
      "notes.title",
      "notes.pinned",
      noteUpdatedAt.as("updated"),
      sql<string | null>`substr(note_bodies.text, 1, ${SUMMARISED_CHARACTERS})`.as("text"),
      // The window count gives the total from the same scan as the page.
      sql<number>`count(*) over ()`.as("total"),
    ])
    .where("notes.owner_id", "=", ownerId);
  if (since !== undefined) query = query.where(noteUpdatedAt, ">=", since);
  if (until !== undefined) query = query.where(noteUpdatedAt, "<", until);
  const rows = await query.orderBy("updated", "desc").orderBy("notes.id", "desc").limit(limit).execute();
  return { rows, total: Number(rows[0]?.total ?? 0) };
}

/** Summaries a model wrote, by note id; notes without one get the extractive summary. */
export type WrittenSummaries = (notes: { id: number; title: string; text: string; updated: string }[]) => Promise<Map<number, string>>;

/** The most recently updated notes, each with a summary (extractive unless `written` gives one), and the list as HTML. */
export async function notesSummary(db: Kysely<Schema>, ownerId: number, limit: number, written?: WrittenSummaries) {
  const { rows } = await recentNotes(db, ownerId, { limit });
  const now = new Date();
  const byModel = written
    ? await written(rows.map((row) => ({ id: row.id, title: row.title, text: row.text ?? "", updated: row.updated })))
    : new Map();
  const notes = rows.map((row) => ({
    id: row.id,
    title: row.title,
    summary: byModel.get(row.id) ?? extractiveSummary(row.title, row.text ?? "", SUMMARY),
    updatedAt: row.updated,
    relativeTime: relativeTime(row.updated, now),
    pinned: row.pinned === 1,
  }));
  const items = notes.map(
    (n) =>
      `<li><strong>${escapeHtml(n.title)}</strong> <em>(${escapeHtml(n.relativeTime)})</em>${n.summary ? ` — ${escapeHtml(n.summary)}` : ""}</li>`,
  );
  return { notes, notesSummary: items.length ? `<ul>${items.join("")}</ul>` : "<p>No notes yet.</p>" };
}
