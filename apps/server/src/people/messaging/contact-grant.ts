import type { Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import type { RunGrant } from "../../agent/tools/run-grant";
import type { Schema } from "../../db/schema";
import { listFolders } from "../../workspace/folders/folders-service";
import { memoryFolderIds } from "../../workspace/memory/memory-tree";

/**
 * The only tools a contact's agent run may ever have, whatever its permission says: reading notes
 * (and, with write access, creating and editing them) in the granted folders, reading todos and
 * creating them. Nothing else: no memory, snapshots, network, pinning or completing todos.
 */
export const CONTACT_TOOLS: ReadonlySet<string> = new Set([
  "search_notes",
  "grep_notes",
  "get_note_content",
  "list_notes",
  "list_folders",
  "create_note",
  "edit_note",
  "list_todos",
  "create_todo",
]);

type Level = "none" | "read" | "write";

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** `read`, `write` / `edit` (both mean read and write), anything else none: unknown words fail closed. */
function levelOf(value: unknown): Level {
  if (value === "read" || value === true) return "read";
  if (value === "write" || value === "edit") return "write";
  return "none";
}

interface NotesPermission {
  level: Level;
  /** `all`: every folder of the owner's own; else the listed folders (with their subfolders). */
  folders: "all" | number[];
}

/**
 * Reads the notes part of a permission: `notesAccess: {scope: "all" | "folders", folderIds?,
 * access: "read" | "write" | "edit"}` (the desktop's form), or the short `notes: "read"`.
 * Malformed parts give nothing.
 */
function notesPermission(permissions: Record<string, unknown>): NotesPermission {
  const access = permissions.notesAccess;
  if (isRecord(access)) {
    const level = levelOf(access.access);
    if (access.scope === undefined || access.scope === "all") return { level, folders: "all" };
    if (access.scope === "folders" && Array.isArray(access.folderIds)) {
      const ids = access.folderIds.map((id) => Number(id)).filter((id) => Number.isSafeInteger(id) && id > 0);
      return { level, folders: ids };
    }
    return { level: "none", folders: [] };
  }
  return { level: levelOf(permissions.notes), folders: "all" };
}

/**
 * Reads the todos part: `todosAccess: {access: "read" | "write" | "create"}` (write and create both
 * mean read and create, never complete), or the short `todos: true` (read).
 */
function todosLevel(permissions: Record<string, unknown>): Level {
  const access = permissions.todosAccess;
  if (isRecord(access)) return access.access === "create" ? "write" : levelOf(access.access);
  return permissions.todos === true ? "read" : "none";
}

/**
 * The run a contact's question gets in `ownerId`'s workspace: exactly what the owner's permission
 * for that contact allows, built before the model sees a word. Folders are the owner's own only
 * (never folders others share with the owner, never notes at the root), each with its subfolders;
 * folder ids that are not the owner's are dropped. The owner's Memory (the agent's memory, the
 * heartbeat checklist `Memory/Self/HEARTBEAT.md`) is never in it, even under `scope: "all"` or
 * when named: only the owner reads or writes it. Every contact's run, however the contact came to
 * be, gets its folders here.
 */
export async function contactRunGrant(
  db: Kysely<Schema>,
  ownerId: number,
  caller: { userId: number; label: string },
  permissions: unknown,
): Promise<RunGrant> {
  const granted = isRecord(permissions) ? permissions : {};
  const notes = notesPermission(granted);
  const todos = todosLevel(granted);
  const scopes = new Set<Scope>();
  let folders = new Set<number>();
  if (notes.level !== "none") {
    const own = (await listFolders(db, ownerId)).filter((folder) => !folder.shared);
    if (notes.folders === "all") folders = new Set(own.map((folder) => folder.id));
    else {
      const ownIds = new Set(own.map((folder) => folder.id));
      const pending = notes.folders.filter((id) => ownIds.has(id));
      folders = new Set(pending);
      // Subfolders of a granted folder are granted too.
      for (let i = 0; i < pending.length; i++) {
        for (const folder of own) {
          if (folder.parentId === pending[i] && !folders.has(folder.id)) {
            folders.add(folder.id);
            pending.push(folder.id);
          }
        }
      }
    }
    const memory = new Set(await memoryFolderIds(db, ownerId));
    folders = new Set([...folders].filter((id) => !memory.has(id)));
    scopes.add("os.notes:read");
    if (notes.level === "write") scopes.add("os.notes:write");
  }
  if (todos !== "none") {
    scopes.add("os.todos:read");
    if (todos === "write") scopes.add("os.todos:write");
  }
  return {
    ownerId,
    caller: { kind: "contact", userId: caller.userId, label: caller.label },
    scopes,
    folders,
    tools: CONTACT_TOOLS,
  };
}
