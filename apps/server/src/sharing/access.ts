import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import { forbidden, notFound } from "../http/errors";

export type Role = "owner" | "editor" | "viewer";

export interface SharedFolderAccess {
  ownerId: number;
  role: "editor" | "viewer";
}

/**
 * Folders other people shared with a user, each with everything below it, by folder id. When
 * two shares reach the same folder, the stronger role wins.
 */
export async function sharedFolders(db: Kysely<Schema>, userId: number): Promise<Map<number, SharedFolderAccess>> {
  const shares = await db
    .selectFrom("folder_shares")
    .innerJoin("folders", "folders.uuid", "folder_shares.folder_uuid")
    .select(["folders.id", "folder_shares.owner_id", "folder_shares.role"])
    .where("folder_shares.grantee_id", "=", userId)
    .whereRef("folders.owner_id", "=", "folder_shares.owner_id")
    .execute();
  const access = new Map<number, SharedFolderAccess>();
  if (shares.length === 0) return access;
  const owners = [...new Set(shares.map((s) => s.owner_id))];
  const tree = await db.selectFrom("folders").select(["id", "parent_id"]).where("owner_id", "in", owners).execute();
  const children = new Map<number, number[]>();
  for (const folder of tree) {
    if (folder.parent_id !== null) children.set(folder.parent_id, [...(children.get(folder.parent_id) ?? []), folder.id]);
  }
  for (const share of shares) {
    const grant = { ownerId: share.owner_id, role: share.role };
    for (let frontier = [share.id]; frontier.length > 0; frontier = frontier.flatMap((id) => children.get(id) ?? [])) {
      for (const id of frontier) {
        if (access.get(id)?.role !== "editor") access.set(id, grant);
      }
    }
  }
  return access;
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
