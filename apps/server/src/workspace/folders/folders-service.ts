import { createHash, randomUUID } from "node:crypto";
import {
  type Folder,
  folderNameKey,
  putFolder,
  readFolders,
  splitFolderPath,
  trashFolder,
  withoutTrashed,
  workspaceDocName,
} from "@tandem/core";
import { type CompiledQuery, type Kysely, PostgresIntrospector, type Selectable, sql, type Transaction } from "kysely";
import type * as Y from "yjs";
import { nowIso } from "../../clock";
import type { FoldersTable, Schema } from "../../db/schema";
import type { SyncReads } from "../../db/sync-reads";
import { badRequest, conflict, notFound } from "../../http/errors";
import { folderRole, type Role, sharedAccessCtes, sharedFolders } from "../../people/sharing/access";
import type { SyncServer } from "../../sync/sync-server";

export const GENERAL_FOLDER = "General";

type FolderRow = Selectable<FoldersTable>;
type Db = Kysely<Schema> | Transaction<Schema>;

/**
 * General's uuid is derived from the user id (a name-based UUID), so two servers or clients that
 * create it at once write the same key and converge on one folder.
 */
export function generalFolderUuid(userId: number): string {
  const hash = createHash("sha1").update(`tandem:general-folder:${userId}`).digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

type ListedRow = Pick<FolderRow, "id" | "name" | "parent_id" | "icon" | "created_at"> & { file_count: number };

function toFolder(row: ListedRow, role: Role = "owner", parentVisible = true): Folder {
  return {
    id: row.id,
    name: row.name,
    // A shared folder whose parent the caller cannot see sits at their top level.
    parentId: parentVisible ? row.parent_id : null,
    icon: row.icon,
    fileCount: Number(row.file_count),
    createdAt: row.created_at,
    shared: role !== "owner",
    role,
  };
}

/** A folder the user owns, or a 404 (also for someone else's folder: its existence is not ours to reveal). */
export async function getOwnedFolder(db: Db, ownerId: number, folderId: number): Promise<FolderRow> {
  const row = await db.selectFrom("folders").selectAll().where("id", "=", folderId).where("owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound(`folder ${folderId}`);
  return row;
}

function foldersWithCounts(db: Db) {
  return (
    db
      .selectFrom("folders")
      // Only what a listing shows: sqlite3 builds every column of every row as a JS property, one by one.
      .select(["id", "name", "parent_id", "icon", "created_at"])
      // Matching the owner too lets the count use the (owner_id, folder_id) index instead of scanning every note.
      .select(
        sql<number>`(select count(*) from notes where notes.owner_id = folders.owner_id and notes.folder_id = folders.id)`.as("file_count"),
      )
  );
}

type Listing = CompiledQuery<{ folders: Folder[] | string }>;

/**
 * The statement behind `visibleFolders` for one user (any user: every parameter is the user id).
 * The database builds the JSON array of `Folder` objects itself, keys in `toFolder`'s order:
 * sqlite3 would otherwise build every column of every row as a JS property, one native call each,
 * which costs several times what parsing one string does. SQLite and PostgreSQL spell that
 * differently, and only that.
 */
function compileListing(db: Kysely<Schema>, userId: number, rootOnly: boolean): Listing {
  const postgres = db.introspection instanceof PostgresIntrospector;
  const folder = postgres
    ? sql`json_build_object('id', id, 'name', name, 'parentId', parent_id, 'icon', icon, 'fileCount', file_count, 'createdAt', created_at, 'shared', grp = 1, 'role', role)`
    : sql`json_object('id', id, 'name', name, 'parentId', parent_id, 'icon', icon, 'fileCount', file_count, 'createdAt', created_at, 'shared', json(iif(grp = 1, 'true', 'false')), 'role', role)`;
  const array = postgres
    ? sql`coalesce(json_agg(${folder} order by grp, name_key, id), '[]'::json)`
    : sql`json_group_array(${folder} order by grp, name_key, id)`;
  const fileCount = sql`(select count(*) from notes where notes.owner_id = folders.owner_id and notes.folder_id = folders.id)`;
  return sql<{ folders: Folder[] | string }>`
    with recursive ${sharedAccessCtes(userId)},
    visible as (
      select 0 as grp, id, name, parent_id, icon, created_at, name_key, 'owner' as role, ${fileCount} as file_count
      from folders
      where owner_id = ${userId}${rootOnly ? sql` and parent_id is null` : sql``}
      union all
      select 1, folders.id, folders.name, case when parent.id is null then null else folders.parent_id end,
        folders.icon, folders.created_at, folders.name_key, shared_access.role, ${fileCount}
      from shared_access
      inner join folders on folders.id = shared_access.id
      -- A shared folder whose parent the caller cannot see sits at their top level.
      left join shared_access as parent on parent.id = folders.parent_id
      ${rootOnly ? sql`where parent.id is null` : sql``}
    )
    select ${array} as folders from visible`.compile(db);
}

/**
 * Listings compiled once per database instance: building and compiling the statement costs
 * more main-thread time than SQLite takes to run it, and only the user id changes.
 */
const listings = new WeakMap<Kysely<Schema>, { all: Listing; root: Listing }>();

function listingFor(db: Kysely<Schema>, userId: number, rootOnly: boolean): Listing {
  let compiled = listings.get(db);
  if (!compiled) {
    // Compiled with a user id no one has, to check that the user id is the only parameter.
    const probe = -1;
    compiled = { all: compileListing(db, probe, false), root: compileListing(db, probe, true) };
    if (![...compiled.all.parameters, ...compiled.root.parameters].every((parameter) => parameter === probe)) {
      throw new Error("the folder listing must have no parameter but the user id");
    }
    listings.set(db, compiled);
  }
  const listing = rootOnly ? compiled.root : compiled.all;
  return { ...listing, parameters: listing.parameters.map(() => userId) };
}

/** Folders as objects, or as the JSON text of the array when SQLite wrote it. */
type FolderList = Folder[] | string;

/**
 * The user's own folders, then those shared with them, each group by name: all of them, or only
 * the top level (`rootOnly`). One statement, so the folders, the shares and the note counts come
 * from one snapshot. SQLite answers JSON text; PostgreSQL's driver parses json columns itself.
 */
async function visibleFolders(db: Kysely<Schema>, userId: number, rootOnly: boolean, now?: SyncReads): Promise<FolderList> {
  const listing = listingFor(db, userId, rootOnly);
  const rows = now?.rowsNow(listing) ?? (await db.executeQuery(listing)).rows;
  return rows[0]?.folders ?? [];
}

async function folderList(db: Kysely<Schema>, userId: number, parent: number | "root" | undefined, now?: SyncReads): Promise<FolderList> {
  if (typeof parent !== "number") return visibleFolders(db, userId, parent === "root", now);
  const { role } = await folderRole(db, userId, parent);
  const rows = await foldersWithCounts(db).where("parent_id", "=", parent).orderBy("name_key").orderBy("id").execute();
  if (role === "owner") return rows.map((row) => toFolder(row));
  const shared = await sharedFolders(db, userId);
  return rows.map((row) => toFolder(row, shared.get(row.id)?.role ?? role));
}

/**
 * The folders a user sees: their own and those shared with them. All of them, the children of
 * one (`parent`), or the top level (`"root"`: their own top-level folders and the shared ones
 * whose parent they cannot see).
 */
export async function listFolders(db: Kysely<Schema>, userId: number, parent?: number | "root"): Promise<Folder[]> {
  const folders = await folderList(db, userId, parent);
  return typeof folders === "string" ? (JSON.parse(folders) as Folder[]) : folders;
}

/**
 * {@link listFolders} as the JSON text of the array, for the route: SQLite's text goes out as it
 * is, which saves parsing it and serialising it again on every request. Its bytes are those
 * `JSON.stringify` makes of the parsed array (the values are integers, strings, null and
 * booleans, and SQLite escapes strings as V8 does); `folders-json.test.ts` holds it to that.
 * `now`, the connection behind `db` when it is SQLite's read connection (`Database.readsNow`),
 * answers the listing without Kysely's executor.
 */
export async function listFoldersJson(db: Kysely<Schema>, userId: number, parent?: number | "root", now?: SyncReads): Promise<string> {
  const folders = await folderList(db, userId, parent, now);
  return typeof folders === "string" ? folders : JSON.stringify(folders);
}

/** `A/B/C` for a folder, walking up its parents (the view has no cycles). */
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

/**
 * The ids of the folders along a path of names from the root (case- and normalisation-insensitively;
 * of two siblings of one name, the older), or null when one of them does not exist.
 */
export async function findFolderPath(db: Db, ownerId: number, names: readonly string[]): Promise<number[] | null> {
  const ids: number[] = [];
  for (const name of names) {
    const parent = ids.at(-1);
    let query = db.selectFrom("folders").select("id").where("owner_id", "=", ownerId).where("name_key", "=", folderNameKey(name));
    query = parent === undefined ? query.where("parent_id", "is", null) : query.where("parent_id", "=", parent);
    const row = await query.orderBy("id").executeTakeFirst();
    if (!row) return null;
    ids.push(row.id);
  }
  return ids;
}

/** Finds a folder by parent and name (case- and normalisation-insensitively), from one reading of the document. */
function childIndex(doc: Y.Doc) {
  const key = (parent: string | null, name: string) => `${parent ?? ""}/${folderNameKey(name)}`;
  const children = new Map<string, string>();
  for (const [uuid, meta] of withoutTrashed(readFolders(doc))) {
    // Two edits made apart can leave two folders of one name in one place: the first one counts.
    const at = key(meta.parent, meta.name);
    if (!children.has(at)) children.set(at, uuid);
  }
  return {
    find: (parent: string | null, name: string) => children.get(key(parent, name)),
    add: (parent: string | null, name: string, uuid: string) => children.set(key(parent, name), uuid),
  };
}

/** The child of `parent` named `name` (case- and normalisation-insensitively) in the document. */
function findChild(doc: Y.Doc, parent: string | null, name: string): string | undefined {
  return childIndex(doc).find(parent, name);
}

/**
 * Finds each folder along each of `paths` under `parent`, creating the missing ones, inside one
 * document transaction and with one reading of the folders however many paths there are. Answers,
 * per path, the uuids along it and which names were created.
 */
export function ensurePaths(
  doc: Y.Doc,
  parent: string | null,
  paths: readonly string[][],
  uuidFor: (parent: string | null, name: string) => string,
) {
  const index = childIndex(doc);
  return paths.map((segments) => {
    const uuids: string[] = [];
    const created: string[] = [];
    let current = parent;
    for (const name of segments) {
      let uuid = index.find(current, name);
      if (!uuid) {
        uuid = uuidFor(current, name);
        const now = nowIso();
        putFolder(doc, uuid, { name: name.trim(), parent: current, icon: null, createdAt: now, updatedAt: now });
        index.add(current, name, uuid);
        created.push(name.trim());
      }
      uuids.push(uuid);
      current = uuid;
    }
    return { uuids, created };
  });
}

/** {@link ensurePaths} for one path. */
export function ensurePath(
  doc: Y.Doc,
  parent: string | null,
  segments: string[],
  uuidFor: (parent: string | null, name: string) => string,
) {
  return ensurePaths(doc, parent, [segments], uuidFor)[0] as { uuids: string[]; created: string[] };
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
  sync: SyncServer,
  ownerId: number,
  input: { name?: string; path?: string; parentId?: number | null },
): Promise<CreateFolderResult> {
  const split = splitFolderPath(input.path ?? input.name ?? "");
  if ("problem" in split) throw badRequest("invalid_request", `${input.path !== undefined ? "body.path" : "body.name"}: ${split.problem}`);
  const parentRow = input.parentId ? await getOwnedFolder(db, ownerId, input.parentId) : null;
  const { uuids, created } = await sync.change(workspaceDocName(ownerId), ownerId, (doc) =>
    ensurePath(doc, parentRow?.uuid ?? null, split.segments, () => randomUUID()),
  );
  const leafUuid = uuids.at(-1) as string;
  const leaf = await db
    .selectFrom("folders")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .where("uuid", "=", leafUuid)
    .executeTakeFirstOrThrow();
  const path = (await folderPath(db, ownerId, leaf.id)).join("/");
  const mode = created.length > 0 ? "created" : "existing";
  return {
    mode,
    path,
    folder: { id: leaf.id, name: leaf.name, parentId: leaf.parent_id },
    createdSegments: created,
    message: mode === "created" ? `Created ${created.map((s) => `"${s}"`).join(", ")}` : `Folder "${path}" already exists`,
  };
}

/**
 * Finds or creates the folders along each of `paths` from the root in one document change (one
 * view update, however many paths); answers which names each path created.
 */
export async function ensureFolderPaths(sync: SyncServer, ownerId: number, paths: readonly string[][]) {
  return sync.change(workspaceDocName(ownerId), ownerId, (doc) => ensurePaths(doc, null, paths, () => randomUUID()));
}

/** Finds or creates the folders along `segments` from the root; answers the last one's view row. */
export async function ensureFolderPath(db: Kysely<Schema>, sync: SyncServer, ownerId: number, segments: string[]) {
  const { uuids, created } = await sync.change(workspaceDocName(ownerId), ownerId, (doc) =>
    ensurePath(doc, null, segments, () => randomUUID()),
  );
  const leaf = await db
    .selectFrom("folders")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .where("uuid", "=", uuids.at(-1) as string)
    .executeTakeFirstOrThrow();
  return { folder: leaf, created };
}

/** Renames and/or moves a folder; refuses a move into itself or below itself. */
export async function updateFolder(
  db: Kysely<Schema>,
  sync: SyncServer,
  ownerId: number,
  folderId: number,
  input: { name?: string; parentId?: number | null },
): Promise<FolderRow> {
  const folder = await getOwnedFolder(db, ownerId, folderId);
  let parentUuid: string | null | undefined;
  if (input.parentId !== undefined) {
    parentUuid = null;
    if (input.parentId !== null) {
      const parent = await getOwnedFolder(db, ownerId, input.parentId);
      for (let current: number | null = parent.id; current !== null; current = (await getOwnedFolder(db, ownerId, current)).parent_id) {
        if (current === folder.id) throw badRequest("invalid_move", "body.parentId: a folder cannot move into itself or below itself");
      }
      parentUuid = parent.uuid;
    }
  }
  await sync.change(workspaceDocName(ownerId), ownerId, (doc) => {
    const targetParent = parentUuid === undefined ? (readFolders(doc).get(folder.uuid)?.parent ?? null) : parentUuid;
    const name = input.name?.trim();
    if (name !== undefined) {
      const clash = findChild(doc, targetParent, name);
      if (clash && clash !== folder.uuid) throw conflict("folder_exists", `A folder named "${name}" already exists there`);
    }
    putFolder(doc, folder.uuid, { name, parent: parentUuid, updatedAt: nowIso() });
  });
  return getOwnedFolder(db, ownerId, folderId);
}

/**
 * Moves a folder to the Trash without losing anything in it: its notes and subfolders move up to
 * its parent (the root for a top-level folder). Answers how many of each moved.
 */
export async function deleteFolder(db: Kysely<Schema>, sync: SyncServer, ownerId: number, folderId: number) {
  const folder = await getOwnedFolder(db, ownerId, folderId);
  return sync.change(workspaceDocName(ownerId), ownerId, (doc) => {
    const { parent, movedFolders, movedNotes } = trashFolder(doc, folder.uuid, nowIso());
    return { movedFolders, movedNotes, movedTo: parent === null ? null : folder.parent_id };
  });
}

/** Makes sure the user's workspace has its General folder; answers whether this call created it. */
export async function ensureGeneralFolder(sync: SyncServer, ownerId: number): Promise<boolean> {
  const uuid = generalFolderUuid(ownerId);
  return sync.change(workspaceDocName(ownerId), ownerId, (doc) => {
    if (readFolders(doc).get(uuid)?.trashedAt === null) return false;
    const now = nowIso();
    // A trashed General comes back (a fresh one: the same uuid is every device's General).
    putFolder(doc, uuid, { name: GENERAL_FOLDER, parent: null, icon: null, createdAt: now, updatedAt: now, trashedAt: null });
    return true;
  });
}
