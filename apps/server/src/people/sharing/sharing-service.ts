import type { Kysely } from "kysely";
import { nowIso } from "../../clock";
import type { Schema } from "../../db/schema";
import { badRequest, conflict, notFound } from "../../http/errors";
import { bumpAccessEpoch } from "../../sync/access-epoch";
import { getOwnedFolder } from "../../workspace/folders/folders-service";
import { MEMORY_FOLDER, memoryFolderIds } from "../../workspace/memory/memory-tree";
import { requireUserByUsername } from "../users/users-service";

export interface FolderShare {
  folderId: number;
  userId: number;
  username: string;
  role: "viewer" | "editor";
  createdAt: string;
}

/** Shares a folder the caller owns; answers the share and whether it is new (else its role changed). */
export async function shareFolder(
  db: Kysely<Schema>,
  ownerId: number,
  folderId: number,
  input: { username: string; role: "viewer" | "editor" },
): Promise<{ share: FolderShare; created: boolean }> {
  const folder = await getOwnedFolder(db, ownerId, folderId);
  // Memory is a top-level folder, so no folder holds it: refusing Memory and what is below it is
  // all there is to refuse. The access rules leave Memory out anyway (see sharedAccessCtes), also
  // for a share whose folder moves into Memory later; this answers the owner in words instead.
  if ((await memoryFolderIds(db, ownerId)).includes(folder.id)) {
    throw conflict(
      "memory_not_shareable",
      `Folder "${folder.name}" is your ${MEMORY_FOLDER} or inside it: your agent's memory (such as ${MEMORY_FOLDER}/Self/USER.md and the heartbeat checklist) is never shared with anyone`,
    );
  }
  const grantee = await requireUserByUsername(db, input.username);
  if (grantee.id === ownerId) throw badRequest("invalid_request", "body.username: you cannot share a folder with yourself");
  const existing = await db
    .selectFrom("folder_shares")
    .select("created_at")
    .where("owner_id", "=", ownerId)
    .where("folder_uuid", "=", folder.uuid)
    .where("grantee_id", "=", grantee.id)
    .executeTakeFirst();
  const createdAt = existing?.created_at ?? nowIso();
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto("folder_shares")
      .values({ folder_uuid: folder.uuid, owner_id: ownerId, grantee_id: grantee.id, role: input.role, created_at: createdAt })
      .onConflict((oc) => oc.columns(["owner_id", "folder_uuid", "grantee_id"]).doUpdateSet({ role: input.role }))
      .execute();
    // A role lowered to viewer must downgrade the grantee's open editors.
    if (existing) await bumpAccessEpoch(tx);
  });
  return { share: { folderId, userId: grantee.id, username: grantee.username, role: input.role, createdAt }, created: !existing };
}

export async function listFolderShares(db: Kysely<Schema>, ownerId: number, folderId: number): Promise<FolderShare[]> {
  const folder = await getOwnedFolder(db, ownerId, folderId);
  const rows = await db
    .selectFrom("folder_shares")
    .innerJoin("users", "users.id", "folder_shares.grantee_id")
    .select(["users.id", "users.username", "folder_shares.role", "folder_shares.created_at"])
    .where("folder_shares.owner_id", "=", ownerId)
    .where("folder_shares.folder_uuid", "=", folder.uuid)
    .orderBy("users.username")
    .execute();
  return rows.map((row) => ({ folderId, userId: row.id, username: row.username, role: row.role, createdAt: row.created_at }));
}

export async function unshareFolder(db: Kysely<Schema>, ownerId: number, folderId: number, username: string): Promise<void> {
  const folder = await getOwnedFolder(db, ownerId, folderId);
  const grantee = await requireUserByUsername(db, username);
  const deleted = await db.transaction().execute(async (tx) => {
    const result = await tx
      .deleteFrom("folder_shares")
      .where("owner_id", "=", ownerId)
      .where("folder_uuid", "=", folder.uuid)
      .where("grantee_id", "=", grantee.id)
      .executeTakeFirst();
    if (result.numDeletedRows > 0n) await bumpAccessEpoch(tx);
    return result.numDeletedRows > 0n;
  });
  if (!deleted) throw notFound(`a share of folder ${folderId} with "${username}"`);
}
