import { folderNameKey } from "@tandem/core";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Schema } from "../../db/schema";

// Where Memory is, and nothing else: the access checks of sharing need this without the memory
// service's dependencies on notes, folders and sync (which themselves depend on those checks).

/** The agent's memory is the root folder named Memory (any case) and everything below it. */
export const MEMORY_FOLDER = "Memory";

/** The ids of the owner's Memory folder and every folder below it. */
export async function memoryFolderIds(db: Kysely<Schema>, ownerId: number): Promise<number[]> {
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

/**
 * `memory_tree (id)`, a common table expression for a `with recursive` clause (SQLite and
 * PostgreSQL alike): the Memory folders, and every folder below them, of the users `owners` (a
 * subquery of user ids) selects; in SQL what {@link memoryFolderIds} answers for one owner. The
 * name is a literal, not a parameter, so statements compiled once with the user id as their only
 * parameter (the folder listing) can hold it.
 */
export function memoryTreeCte(owners: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`memory_tree (id) as (
    select id from folders
    where owner_id in (${owners}) and parent_id is null and name_key = ${sql.lit(folderNameKey(MEMORY_FOLDER))}
    union
    select folders.id from memory_tree inner join folders on folders.parent_id = memory_tree.id
  )`;
}
