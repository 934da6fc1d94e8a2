import { folderNameKey } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Dialect } from "../db/database";
import type { Schema } from "../db/schema";
import { folderPath } from "../folders/folders-service";
import { searchNotes } from "../search/search-index";

/** The agent's memory is the root folder named Memory (any case) and everything below it. */
export const MEMORY_FOLDER = "Memory";

async function memoryFolderIds(db: Kysely<Schema>, ownerId: number): Promise<number[]> {
  const folders = await db.selectFrom("folders").select(["id", "parent_id", "name_key"]).where("owner_id", "=", ownerId).execute();
  const roots = folders.filter((f) => f.parent_id === null && f.name_key === folderNameKey(MEMORY_FOLDER)).map((f) => f.id);
  const ids = new Set(roots);
  // Breadth-first down the tree; the view has no cycles.
  for (let frontier = roots; frontier.length > 0; ) {
    frontier = folders.filter((f) => f.parent_id !== null && frontier.includes(f.parent_id) && !ids.has(f.id)).map((f) => f.id);
    for (const id of frontier) ids.add(id);
  }
  return [...ids];
}

export async function searchMemory(db: Kysely<Schema>, dialect: Dialect, ownerId: number, query: string, limit: number) {
  const folderIds = await memoryFolderIds(db, ownerId);
  if (folderIds.length === 0) return [];
  const hits = await searchNotes(db, dialect, { ownerId, folderIds }, query, limit);
  return Promise.all(
    hits.map(async (hit) => ({
      title: hit.title,
      snippet: hit.snippet,
      path: [...(await folderPath(db, ownerId, hit.folderId)), `${hit.title}.md`].join("/"),
      noteId: hit.id,
      score: hit.score,
    })),
  );
}
