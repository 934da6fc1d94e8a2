import { randomUUID } from "node:crypto";
import { type Folder, folderNameKey, splitFolderPath } from "@tandem/core";
import type { Kysely, Selectable, Transaction } from "kysely";
import { nowIso } from "../clock";
import type { FoldersTable, Schema } from "../db/schema";
import { badRequest, notFound } from "../http/errors";

export const GENERAL_FOLDER = "General";

type FolderRow = Selectable<FoldersTable>;
type Db = Kysely<Schema> | Transaction<Schema>;

function toFolder(row: FolderRow): Folder {
  return {
    id: row.id,
    name: row.name,
    parentId: row.parent_id,
    icon: row.icon,
    // Notes arrive with the notes issue; until then no folder holds any.
    fileCount: 0,
    createdAt: row.created_at,
    shared: false,
    role: "owner",
  };
}

/** A folder the user owns, or a 404 (also for someone else's folder: its existence is not ours to reveal). */
export async function getOwnedFolder(db: Db, ownerId: number, folderId: number): Promise<FolderRow> {
  const row = await db.selectFrom("folders").selectAll().where("id", "=", folderId).where("owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound(`folder ${folderId}`);
  return row;
}

/** All of the user's folders, or the children of one (`"root"` for top-level folders). */
export async function listFolders(db: Db, ownerId: number, parent?: number | "root"): Promise<Folder[]> {
  let query = db.selectFrom("folders").selectAll().where("owner_id", "=", ownerId);
  if (parent === "root") query = query.where("parent_id", "is", null);
  else if (parent !== undefined) {
    await getOwnedFolder(db, ownerId, parent);
    query = query.where("parent_id", "=", parent);
  }
  const rows = await query.orderBy("name_key").orderBy("id").execute();
  return rows.map(toFolder);
}

/**
 * Finds the child `name` of `parentId`, creating it if missing. Concurrent callers race on the
 * unique sibling index; the loser's insert does nothing and it reads the winner's row.
 */
async function findOrCreateChild(
  db: Db,
  ownerId: number,
  parentId: number | null,
  name: string,
): Promise<{ row: FolderRow; created: boolean }> {
  const nameKey = folderNameKey(name);
  const parentKey = parentId ?? 0;
  const now = nowIso();
  const inserted = await db
    .insertInto("folders")
    .values({
      uuid: randomUUID(),
      owner_id: ownerId,
      parent_id: parentId,
      parent_key: parentKey,
      name: name.trim(),
      name_key: nameKey,
      icon: null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(["owner_id", "parent_key", "name_key"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const existing = await db
    .selectFrom("folders")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .where("parent_key", "=", parentKey)
    .where("name_key", "=", nameKey)
    .executeTakeFirstOrThrow();
  return { row: existing, created: false };
}

/** `A/B/C` for a folder, walking up its parents. */
export async function folderPath(db: Db, ownerId: number, folderId: number | null): Promise<string[]> {
  const names: string[] = [];
  let current = folderId;
  while (current !== null) {
    const row = await getOwnedFolder(db, ownerId, current);
    names.unshift(row.name);
    current = row.parent_id;
  }
  return names;
}

export interface CreateFolderResult {
  mode: "created" | "existing";
  path: string;
  folder: { id: number; name: string; parentId: number | null };
  createdSegments: string[];
  message: string;
}

/** Creates a folder by name, or every missing folder along a nested path, under `parentId`. */
export async function createFolder(
  db: Kysely<Schema>,
  ownerId: number,
  input: { name?: string; path?: string; parentId?: number | null },
): Promise<CreateFolderResult> {
  const split = splitFolderPath(input.path ?? input.name ?? "");
  if ("problem" in split) throw badRequest("invalid_request", `${input.path !== undefined ? "body.path" : "body.name"}: ${split.problem}`);
  return db.transaction().execute(async (tx) => {
    const parentId = input.parentId ?? null;
    const prefix = await folderPath(tx, ownerId, parentId);
    let current: FolderRow | undefined;
    const createdSegments: string[] = [];
    const names = [...prefix];
    for (const segment of split.segments) {
      const { row, created } = await findOrCreateChild(tx, ownerId, current?.id ?? parentId, segment);
      if (created) createdSegments.push(row.name);
      names.push(row.name);
      current = row;
    }
    if (!current) throw badRequest("invalid_request", "body.path: must name at least one folder");
    const path = names.join("/");
    const mode = createdSegments.length > 0 ? "created" : "existing";
    return {
      mode,
      path,
      folder: { id: current.id, name: current.name, parentId: current.parent_id },
      createdSegments,
      message: mode === "created" ? `Created ${createdSegments.map((s) => `"${s}"`).join(", ")}` : `Folder "${path}" already exists`,
    };
  });
}

/** Makes sure the user's workspace has its General folder; answers whether this call created it. */
export async function ensureGeneralFolder(db: Kysely<Schema>, ownerId: number): Promise<boolean> {
  const { created } = await findOrCreateChild(db, ownerId, null, GENERAL_FOLDER);
  return created;
}
