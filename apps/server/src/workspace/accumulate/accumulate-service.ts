import {
  folderNameKey,
  jsonToMarkdown,
  MAX_NOTE_CONTENT_BYTES,
  markdownToJson,
  splitFolderPath,
  textToJson,
  trashNote,
  workspaceDocName,
} from "@tandem/core";
import type { Kysely } from "kysely";
import { nowIso } from "../../clock";
import type { Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";
import type { SyncServer } from "../../sync/sync-server";
import { deleteFolder, ensureFolderPath, ensureFolderPaths, findFolderPath } from "../folders/folders-service";
import { MEMORY_FOLDER } from "../memory/memory-tree";
import { changeMeta, createNoteFromJson, findNoteByTitle, getOwnedNote, readBody, replaceBody } from "../notes/notes-service";
import { workspaceTotals } from "../notes/notes-stats";
import { takeSnapshot } from "../snapshots/snapshots-service";

interface Deps {
  db: Kysely<Schema>;
  sync: SyncServer;
}

export interface AccumulateInput {
  files?: { path: string; content: string; message?: string }[];
  texts?: { title: string; content: string; folder?: string }[];
  delete?: { path: string }[];
  folders?: { create?: string[]; delete?: string[] };
}

interface Report {
  created: number;
  updated: number;
  deleted: number;
  skipped: number;
  errors: { path: string; error: string }[];
  versions: { file: string; from: number; to: number; message: string }[];
  foldersCreated: string[];
}

class EntryError extends Error {}

const TEXT_EXTENSIONS = /\.(txt|text)$/i;
const MARKDOWN_EXTENSIONS = /\.(md|markdown|mdown)$/i;

/** Folder segments of a path, with a leading `memory` (any case) spelled as the Memory folder. */
function folderSegments(path: string): string[] {
  if (path.trim() === "" || path.trim() === "/") return [];
  const split = splitFolderPath(path);
  if ("problem" in split) throw new EntryError(`the folder path ${split.problem}`);
  const [first, ...rest] = split.segments;
  return first !== undefined && folderNameKey(first) === folderNameKey(MEMORY_FOLDER) ? [MEMORY_FOLDER, ...rest] : split.segments;
}

/** `Folder/Sub/name.md` → the folders, the title (the name without its extension) and the format. */
function parseFilePath(path: string): { folders: string[]; title: string; format: "markdown" | "text" } {
  const trimmed = path.trim().replace(/^\/+/, "");
  const slash = trimmed.lastIndexOf("/");
  const fileName = trimmed.slice(slash + 1);
  const title = fileName.replace(TEXT_EXTENSIONS, "").replace(MARKDOWN_EXTENSIONS, "").trim();
  if (title === "") throw new EntryError("the path names no file");
  return {
    folders: folderSegments(trimmed.slice(0, Math.max(0, slash))),
    title,
    format: TEXT_EXTENSIONS.test(fileName) ? "text" : "markdown",
  };
}

async function resolveFolder(deps: Deps, ownerId: number, segments: string[], report: Report): Promise<number | null> {
  if (segments.length === 0) return null;
  const { folder, created } = await ensureFolderPath(deps.db, deps.sync, ownerId, segments);
  if (created.length > 0) report.foldersCreated.push(segments.join("/"));
  return folder.id;
}

/** Creates the note, or updates the one with the same title in the same folder (snapshots on both sides). */
async function upsertNote(
  deps: Deps,
  ownerId: number,
  entry: { label: string; folders: string[]; title: string; content: string; format: "markdown" | "text"; message?: string },
  report: Report,
): Promise<void> {
  if (Buffer.byteLength(entry.content) > MAX_NOTE_CONTENT_BYTES) throw new EntryError("the content is larger than 10 MB");
  const body = entry.format === "text" ? textToJson(entry.content) : markdownToJson(entry.content);
  const folderId = await resolveFolder(deps, ownerId, entry.folders, report);
  const existingId = await findNoteByTitle(deps.db, ownerId, folderId, entry.title);
  if (existingId === undefined) {
    const folder =
      folderId === null
        ? null
        : await deps.db
            .selectFrom("folders")
            .select(["id", "uuid", "name", "owner_id as ownerId"])
            .where("id", "=", folderId)
            .executeTakeFirstOrThrow();
    await createNoteFromJson(deps, ownerId, { title: entry.title, body, folder, tags: [] });
    report.created++;
    return;
  }
  const before = await getOwnedNote(deps.db, ownerId, existingId);
  if (jsonToMarkdown(await readBody(deps.sync, before.uuid)) === jsonToMarkdown(body)) {
    report.skipped++;
    return;
  }
  const message = entry.message ?? `Imported ${entry.label}`;
  const from = await takeSnapshot(deps, before, "Before import", true);
  await replaceBody(deps.sync, ownerId, before.uuid, body);
  await changeMeta(deps.sync, ownerId, before.uuid, {});
  const to = await takeSnapshot(deps, await getOwnedNote(deps.db, ownerId, existingId), message, false);
  report.versions.push({ file: entry.label, from: from.seq, to: to.seq, message });
  report.updated++;
}

/** The folder at a path of names from the root (null: the root itself); `missing` when there is none. */
async function findFolderByPath(db: Kysely<Schema>, ownerId: number, names: string[], missing: string): Promise<number | null> {
  const ids = await findFolderPath(db, ownerId, names);
  if (!ids) throw new EntryError(missing);
  return ids.at(-1) ?? null;
}

async function deleteByPath(deps: Deps, ownerId: number, path: string, report: Report): Promise<void> {
  const { folders, title } = parseFilePath(path);
  const folderId = await findFolderByPath(deps.db, ownerId, folders, "no such note");
  const noteId = await findNoteByTitle(deps.db, ownerId, folderId, title);
  if (noteId === undefined) throw new EntryError("no such note");
  const note = await getOwnedNote(deps.db, ownerId, noteId);
  // Like every delete, to the Trash (restorable for 30 days).
  await deps.sync.change(workspaceDocName(ownerId), ownerId, (doc) => trashNote(doc, note.uuid, nowIso()));
  report.deleted++;
}

async function deleteFolderByPath(deps: Deps, ownerId: number, path: string, report: Report): Promise<void> {
  const segments = folderSegments(path);
  if (segments.length === 0) throw new EntryError("the path names no folder");
  const folderId = await findFolderByPath(deps.db, ownerId, segments, "no such folder");
  await deleteFolder(deps.db, deps.sync, ownerId, folderId as number);
  report.deleted++;
}

/**
 * `folders.create`: every path in one document change, so the workspace view is updated once
 * rather than once per path (each update reads every folder: hundreds of paths were quadratic).
 */
async function createFolders(
  deps: Deps,
  ownerId: number,
  paths: readonly string[],
  report: Report,
  attempt: (path: string, work: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const valid: { path: string; segments: string[] }[] = [];
  for (const path of paths) {
    await attempt(path, async () => {
      const segments = folderSegments(path);
      if (segments.length > 0) valid.push({ path, segments });
    });
  }
  if (valid.length === 0) return;
  const ensured = await ensureFolderPaths(
    deps.sync,
    ownerId,
    valid.map((entry) => entry.segments),
  );
  valid.forEach((entry, index) => {
    if ((ensured[index]?.created.length ?? 0) > 0) report.foldersCreated.push(entry.segments.join("/"));
  });
}

/**
 * Applies an import entry by entry: one that fails is reported in `errors` and the rest still
 * apply. Each entry's writes are durable when it finishes.
 */
export async function accumulate(deps: Deps, ownerId: number, input: AccumulateInput) {
  const report: Report = { created: 0, updated: 0, deleted: 0, skipped: 0, errors: [], versions: [], foldersCreated: [] };
  const attempt = async (path: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      if (error instanceof EntryError || (error instanceof ApiError && error.status < 500))
        report.errors.push({ path, error: error.message });
      else throw error;
    }
  };
  await createFolders(deps, ownerId, input.folders?.create ?? [], report, attempt);
  for (const file of input.files ?? []) {
    await attempt(file.path, () =>
      upsertNote(deps, ownerId, { label: file.path, ...parseFilePath(file.path), content: file.content, message: file.message }, report),
    );
  }
  for (const text of input.texts ?? []) {
    const label = [text.folder, text.title].filter(Boolean).join("/");
    await attempt(label, async () =>
      upsertNote(
        deps,
        ownerId,
        { label, folders: folderSegments(text.folder ?? ""), title: text.title, content: text.content, format: "markdown" },
        report,
      ),
    );
  }
  for (const { path } of input.delete ?? []) await attempt(path, () => deleteByPath(deps, ownerId, path, report));
  for (const path of input.folders?.delete ?? []) await attempt(path, () => deleteFolderByPath(deps, ownerId, path, report));

  const totals = await workspaceTotals(deps.db, ownerId);
  const parts = [`${report.created} created`, `${report.updated} updated`, `${report.deleted} deleted`, `${report.skipped} unchanged`];
  if (report.errors.length) parts.push(`${report.errors.length} failed`);
  return { ...report, workspace: { totalFiles: totals.totalFiles, totalSizeBytes: totals.totalSizeBytes }, message: parts.join(", ") };
}
