import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Schema } from "../../db/schema";
import { forbidden, notFound } from "../../http/errors";
import { memoryTreeCte } from "../../workspace/memory/memory-tree";

export type Role = "owner" | "editor" | "viewer";

export interface SharedFolderAccess {
  ownerId: number;
  role: "editor" | "viewer";
}

/**
 * Common table expressions (for a `with recursive` clause, SQLite and PostgreSQL alike) that
 * answer which folders other people shared with `userId`, each with everything below it:
 * `shared_access (id, owner_id, role)`, one row per folder. When two shares reach the same folder,
 * the stronger role wins ('editor' sorts before 'viewer'). Sharing rules live here and only here,
 * so a listing can join them in the same statement as the folders, and see the same snapshot.
 *
 * - `shared_roots`: the shared folders themselves; a share counts only while its folder still
 *   belongs to the sharer.
 * - `shared_tree`: those and their descendants among the sharers' folders (`union`, not
 *   `union all`, so even a cycle in the view would end).
 * - `memory_tree`: the sharers' Memory folders and everything below them. Memory (the owner's
 *   `Memory/Self/USER.md`, the heartbeat checklist an `ACTIONS` run carries out) is never shared,
 *   whatever a share names: one of Memory, or of a folder that was later moved or renamed into
 *   it, reaches nothing there. Excluding it here, where every path asks (REST, search, grep,
 *   snapshots, sync), is what keeps it the owner's alone; refusing such shares is only courtesy.
 * - `shared_access`: one row per folder, Memory left out. Its `exists` test is redundant for the
 *   answer, but it lets SQLite skip building the recursive part for the many users who have no
 *   shares at all.
 */
export function sharedAccessCtes(userId: number): RawBuilder<unknown> {
  return sql`shared_roots as (
    select folders.id, folder_shares.owner_id, folder_shares.role
    from folder_shares
    inner join folders on folders.uuid = folder_shares.folder_uuid and folders.owner_id = folder_shares.owner_id
    where folder_shares.grantee_id = ${userId}
  ),
  shared_tree (id, owner_id, role) as (
    select id, owner_id, role from shared_roots
    union
    select folders.id, shared_tree.owner_id, shared_tree.role
    from shared_tree
    inner join folders on folders.parent_id = shared_tree.id
    where folders.owner_id in (select owner_id from shared_roots)
  ),
  ${memoryTreeCte(sql`select owner_id from shared_roots`)},
  shared_access as (
    select id, min(owner_id) as owner_id, min(role) as role
    from shared_tree
    where exists (select 1 from folder_shares where grantee_id = ${userId})
      and id not in (select id from memory_tree)
    group by id
  )`;
}

/**
 * Folders other people shared with a user, each with everything below it, by folder id. When
 * two shares reach the same folder, the stronger role wins.
 */
export async function sharedFolders(db: Kysely<Schema>, userId: number): Promise<Map<number, SharedFolderAccess>> {
  const { rows } = await sql<{ id: number; owner_id: number; role: SharedFolderAccess["role"] }>`
    with recursive ${sharedAccessCtes(userId)}
    select id, owner_id, role from shared_access`.execute(db);
  return new Map(rows.map((row) => [Number(row.id), { ownerId: Number(row.owner_id), role: row.role }]));
}

/** The caller's role on a folder: owner, a shared role, or a 404 when they have none. */
export async function folderRole(db: Kysely<Schema>, userId: number, folderId: number): Promise<{ role: Role; ownerId: number }> {
  const row = await db.selectFrom("folders").select(["owner_id"]).where("id", "=", folderId).executeTakeFirst();
  if (row?.owner_id === userId) return { role: "owner", ownerId: userId };
  const shared = row ? (await sharedFolders(db, userId)).get(folderId) : undefined;
  if (!shared) throw notFound(`folder ${folderId}`);
  return shared;
}

/** Throws unless the role may write; a viewer learns why (they can already see the object). */
export function requireWrite(role: Role, what: string): void {
  if (role === "viewer") throw forbidden("read_only", `You can read ${what} but not change it: it is shared with you as a viewer`);
}
