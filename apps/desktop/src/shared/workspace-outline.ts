import type { FolderMeta, NoteMeta } from "@tandem/core/documents";

/**
 * The workspace's outline: every note and folder entry of the workspace document (the Trash's too),
 * kept by the host as JSON text so that a cold start can show the note list before the document
 * itself has loaded (see `DesktopApi.getWorkspaceOutline`). For 20,000 notes it is a few MB, read,
 * sent and parsed at every start, so it is compact: each entry is an array, not an object with its
 * field names repeated, and the host passes the stored text on without parsing it; the page parses
 * it once, here.
 */
export interface WorkspaceOutline {
  readonly notes: ReadonlyMap<string, NoteMeta>;
  readonly folders: ReadonlyMap<string, FolderMeta>;
  /**
   * False for the first screen: every folder, but only the first {@link FIRST_SCREEN_NOTES} notes
   * of "All notes" (none from the Trash). It is a few KB where the whole outline is a few MB, so the
   * list shows while the whole one is still being read, sent and parsed.
   */
  readonly complete: boolean;
}

/** Notes in the first screen's outline: more than a window shows, and enough to move through with the keyboard. */
export const FIRST_SCREEN_NOTES = 100;

/**
 * The note list's order: pinned first, then the most recently updated (as the server lists them).
 * Timestamps (ISO 8601) and uuids compare by code unit: right for them, and several times quicker
 * than `localeCompare`, which sorting 20,000 notes at each render would feel.
 */
export function byListOrder(a: ListedNote, b: ListedNote): number {
  return Number(b.pinned) - Number(a.pinned) || byCodeUnits(b.updatedAt, a.updatedAt) || byCodeUnits(a.uuid, b.uuid);
}

interface ListedNote {
  readonly uuid: string;
  readonly pinned: boolean;
  readonly updatedAt: string;
}

export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The first characters of every outline of this format: text that does not start so is not one (an older format). */
export const OUTLINE_PREFIX = '{"format":2,';

type NoteRow = [
  uuid: string,
  title: string,
  folder: string | null,
  pinned: 0 | 1,
  tags: string[],
  createdAt: string,
  updatedAt: string,
  trashedAt: string | null,
];
type FolderRow = [
  uuid: string,
  name: string,
  parent: string | null,
  icon: string | null,
  createdAt: string,
  updatedAt: string,
  trashedAt: string | null,
];

/** The whole outline: every note and folder entry, the Trash's too. */
export function encodeWorkspaceOutline(notes: ReadonlyMap<string, NoteMeta>, folders: ReadonlyMap<string, FolderMeta>): string {
  return encode(true, notes, folders);
}

/** The first screen (see {@link WorkspaceOutline.complete}). */
export function encodeFirstScreen(notes: ReadonlyMap<string, NoteMeta>, folders: ReadonlyMap<string, FolderMeta>): string {
  const listed: (NoteMeta & ListedNote)[] = [];
  for (const [uuid, meta] of notes) if (meta.trashedAt === null) listed.push({ uuid, ...meta });
  listed.sort(byListOrder);
  const first = new Map(listed.slice(0, FIRST_SCREEN_NOTES).map(({ uuid, ...meta }) => [uuid, meta]));
  return encode(false, first, folders);
}

function encode(complete: boolean, notes: ReadonlyMap<string, NoteMeta>, folders: ReadonlyMap<string, FolderMeta>): string {
  const noteRows: NoteRow[] = [];
  for (const [uuid, n] of notes) noteRows.push([uuid, n.title, n.folder, n.pinned ? 1 : 0, n.tags, n.createdAt, n.updatedAt, n.trashedAt]);
  const folderRows: FolderRow[] = [];
  for (const [uuid, f] of folders) folderRows.push([uuid, f.name, f.parent, f.icon, f.createdAt, f.updatedAt, f.trashedAt]);
  return `${OUTLINE_PREFIX}"complete":${complete},"notes":${JSON.stringify(noteRows)},"folders":${JSON.stringify(folderRows)}}`;
}

const isString = (value: unknown): value is string => typeof value === "string";
const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === "string";

function noteOf(row: unknown): [string, NoteMeta] | null {
  if (!Array.isArray(row) || row.length !== 8) return null;
  const [uuid, title, folder, pinned, tags, createdAt, updatedAt, trashedAt] = row as unknown[];
  if (!isString(uuid) || !isString(title) || !isStringOrNull(folder) || (pinned !== 0 && pinned !== 1)) return null;
  if (!Array.isArray(tags) || !tags.every(isString) || !isString(createdAt) || !isString(updatedAt) || !isStringOrNull(trashedAt))
    return null;
  return [uuid, { title, folder, pinned: pinned === 1, tags, createdAt, updatedAt, trashedAt }];
}

function folderOf(row: unknown): [string, FolderMeta] | null {
  if (!Array.isArray(row) || row.length !== 7) return null;
  const [uuid, name, parent, icon, createdAt, updatedAt, trashedAt] = row as unknown[];
  if (!isString(uuid) || !isString(name) || !isStringOrNull(parent) || !isStringOrNull(icon)) return null;
  if (!isString(createdAt) || !isString(updatedAt) || !isStringOrNull(trashedAt)) return null;
  return [uuid, { name, parent, icon, createdAt, updatedAt, trashedAt }];
}

/** Reads {@link encodeWorkspaceOutline}'s text; null for anything else (an older format, a damaged setting). */
export function decodeWorkspaceOutline(text: string): WorkspaceOutline | null {
  if (!text.startsWith(OUTLINE_PREFIX)) return null;
  let parsed: { complete?: unknown; notes?: unknown; folders?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    return null;
  }
  if (typeof parsed.complete !== "boolean" || !Array.isArray(parsed.notes) || !Array.isArray(parsed.folders)) return null;
  const notes = new Map<string, NoteMeta>();
  for (const row of parsed.notes) {
    const entry = noteOf(row);
    if (!entry) return null;
    notes.set(...entry);
  }
  const folders = new Map<string, FolderMeta>();
  for (const row of parsed.folders) {
    const entry = folderOf(row);
    if (!entry) return null;
    folders.set(...entry);
  }
  return { notes, folders, complete: parsed.complete };
}
