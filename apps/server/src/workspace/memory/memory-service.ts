import { folderNameKey, folderNameProblem, markdownToJson } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Dialect } from "../../db/database";
import type { Schema } from "../../db/schema";
import { badRequest, notFound } from "../../http/errors";
import type { SyncServer } from "../../sync/sync-server";
import { ensureFolderPath, findFolderPath, folderPath } from "../folders/folders-service";
import { appendedBody, changeMeta, createNoteFromJson, findNoteByTitle, getOwnedNote, readBody, replaceBody } from "../notes/notes-service";
import type { Embedder } from "../search/embedder";
import { searchNotes } from "../search/search-index";
import { takeSnapshot } from "../snapshots/snapshots-service";
import { MEMORY_FOLDER, memoryFolderIds } from "./memory-tree";

/** Levels of a memory path below Memory, the note's own name included (`Self/USER.md` is 2). */
export const MAX_MEMORY_PATH_DEPTH = 8;

/** `Memory/Self/USER.md`: the note's folders and its title with `.md`, as memory paths are shown. */
async function memoryPathOf(db: Kysely<Schema>, ownerId: number, folderId: number | null, title: string): Promise<string> {
  return [...(await folderPath(db, ownerId, folderId)), `${title}.md`].join("/");
}

/**
 * Searches the owner's memory as {@link searchNotes} searches notes (by meaning too, given an
 * embedder); given `within`, only the memory folders among those.
 */
export async function searchMemory(
  db: Kysely<Schema>,
  dialect: Dialect,
  ownerId: number,
  query: string,
  limit: number,
  within?: ReadonlySet<number>,
  embedder?: Embedder,
) {
  const folderIds = (await memoryFolderIds(db, ownerId)).filter((id) => within?.has(id) ?? true);
  if (folderIds.length === 0) return [];
  const hits = await searchNotes(db, dialect, { ownerId, folderIds }, query, limit, embedder);
  return Promise.all(
    hits.map(async (hit) => ({
      title: hit.title,
      snippet: hit.snippet,
      path: await memoryPathOf(db, ownerId, hit.folderId, hit.title),
      noteId: hit.id,
      score: hit.score,
    })),
  );
}

/**
 * `Self/USER.md` → folders `[Memory, Self]` and the title `USER`. The path is relative to Memory
 * (a leading `Memory/` is taken as naming Memory itself); every segment must be a valid folder
 * name, which rules out `.` and `..`.
 */
export function parseMemoryPath(path: string): { folders: string[]; title: string } {
  let segments = path
    .trim()
    .replace(/^\/+|\/+$/g, "")
    .split("/")
    .map((segment) => segment.trim());
  if (segments.length > 1 && folderNameKey(segments[0] as string) === folderNameKey(MEMORY_FOLDER)) segments = segments.slice(1);
  if (segments.length > MAX_MEMORY_PATH_DEPTH) {
    throw badRequest("invalid_path", `path: at most ${MAX_MEMORY_PATH_DEPTH} levels below ${MEMORY_FOLDER}`);
  }
  const title = (segments.pop() as string).replace(/\.md$/i, "").trim();
  for (const [index, segment] of [...segments, title].entries()) {
    const problem = folderNameProblem(segment);
    if (problem) throw badRequest("invalid_path", `path: segment ${index + 1} ("${segment}") ${problem}`);
  }
  return { folders: [MEMORY_FOLDER, ...segments], title };
}

/**
 * Writes a memory note: appends to (or replaces) the note of that title in that folder, or
 * creates it. With `folders: "all"` missing folders are created; with a set of folder ids every
 * folder along the path must already exist and be in the set, and anything else is a 404, as for
 * a folder that does not exist (a new folder would be outside the set anyway).
 */
export async function writeMemory(
  deps: { db: Kysely<Schema>; sync: SyncServer },
  ownerId: number,
  input: { path: string; content: string; mode: "append" | "replace" },
  folders: "all" | ReadonlySet<number>,
): Promise<{ id: number; title: string; path: string }> {
  const { db, sync } = deps;
  const target = parseMemoryPath(input.path);
  let folderId: number;
  if (folders === "all") {
    folderId = (await ensureFolderPath(db, sync, ownerId, target.folders)).folder.id;
  } else {
    const ids = await findFolderPath(db, ownerId, target.folders);
    if (!ids?.every((id) => folders.has(id))) throw notFound(`memory folder "${target.folders.join("/")}"`);
    folderId = ids.at(-1) as number;
  }
  const body = markdownToJson(input.content);
  const existingId = await findNoteByTitle(db, ownerId, folderId, target.title);
  let id: number;
  if (existingId === undefined) {
    const folder = await db
      .selectFrom("folders")
      .select(["id", "uuid", "name", "owner_id as ownerId"])
      .where("id", "=", folderId)
      .executeTakeFirstOrThrow();
    id = (await createNoteFromJson(deps, ownerId, { title: target.title, body, folder, tags: [] })).id;
  } else {
    const note = await getOwnedNote(db, ownerId, existingId);
    // A replacement keeps what it overwrites, as PATCH does; an append loses nothing.
    if (input.mode === "replace") await takeSnapshot(deps, note, "Before memory write", true);
    await replaceBody(sync, ownerId, note.uuid, input.mode === "replace" ? body : appendedBody(await readBody(sync, note.uuid), body));
    await changeMeta(sync, ownerId, note.uuid, {});
    id = existingId;
  }
  return { id, title: target.title, path: await memoryPathOf(db, ownerId, folderId, target.title) };
}
