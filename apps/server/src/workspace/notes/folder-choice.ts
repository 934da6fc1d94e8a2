import { folderNameKey } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { badRequest, notFound } from "../../http/errors";
import { folderRole, requireWrite } from "../../people/sharing/access";
import { getOwnedFolder } from "../folders/folders-service";

export interface ChosenFolder {
  id: number;
  uuid: string;
  name: string;
  ownerId: number;
}

/**
 * The folder a request names by `folderId` or `folderName`: null for the root (`folderId: null`
 * or neither given), a 404 for a folder that is not the caller's, a 400 when a name matches
 * more than one folder.
 */
export async function chooseFolder(
  db: Kysely<Schema>,
  ownerId: number,
  choice: { folderId?: number | null; folderName?: string },
  access: "read" | "write" = "write",
): Promise<ChosenFolder | null> {
  if (choice.folderId !== undefined && choice.folderId !== null) {
    // By id, a folder shared with the caller counts too (a name is looked up among their own).
    const { role, ownerId: folderOwner } = await folderRole(db, ownerId, choice.folderId);
    if (access === "write") requireWrite(role, `folder ${choice.folderId}`);
    const row = await getOwnedFolder(db, folderOwner, choice.folderId);
    return { id: row.id, uuid: row.uuid, name: row.name, ownerId: folderOwner };
  }
  if (choice.folderName !== undefined) {
    const rows = await db
      .selectFrom("folders")
      .select(["id", "uuid", "name", "owner_id as ownerId"])
      .where("owner_id", "=", ownerId)
      .where("name_key", "=", folderNameKey(choice.folderName))
      .execute();
    if (rows.length === 0) throw notFound(`folder "${choice.folderName}"`);
    if (rows.length > 1) {
      throw badRequest(
        "ambiguous_folder",
        `${rows.length} folders are named "${choice.folderName}" (ids ${rows.map((r) => r.id).join(", ")}); use folderId`,
      );
    }
    return rows[0] as ChosenFolder;
  }
  return null;
}
