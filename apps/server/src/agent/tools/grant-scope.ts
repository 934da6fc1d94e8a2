// What a run's grant lets its data tools reach, in one place: every tool asks here, so an object
// outside the grant answers exactly as one that does not exist, whichever tool is asked.

import { folderNameKey } from "@tandem/core";
import { badRequest, notFound } from "../../http/errors";
import type { Role } from "../../people/sharing/access";
import { listFolders } from "../../workspace/folders/folders-service";
import { getAccessibleNote, getOwnedNote, type NoteRow } from "../../workspace/notes/notes-service";
import type { SearchScope } from "../../workspace/search/search-index";
import type { ToolRunContext } from "./agent-tool";
import { grantCoversFolder } from "./run-grant";

export interface CoveredFolder {
  id: number;
  name: string;
  /** The parent, or null when the parent is not covered (the folder then sits at the top). */
  parentId: number | null;
  /** `A/B/C` through covered folders only, so no name outside the grant shows. */
  path: string;
  shared: boolean;
  role: Role;
}

/**
 * The folders the grant covers: with `folders: "all"` the owner's and those shared with them (as
 * the REST listing shows them); with a set, only the owner's own folders in it.
 */
export async function coveredFolders({ app, grant }: ToolRunContext): Promise<CoveredFolder[]> {
  const visible = await listFolders(app.db, grant.ownerId);
  const covered = grant.folders === "all" ? visible : visible.filter((f) => !f.shared && grantCoversFolder(grant, f.id));
  const byId = new Map(covered.map((f) => [f.id, f]));
  const pathOf = (id: number): string => {
    const names: string[] = [];
    // The view has no cycles; the bound only keeps a broken one from looping.
    for (let at = byId.get(id); at && names.length <= covered.length; at = at.parentId === null ? undefined : byId.get(at.parentId)) {
      names.unshift(at.name);
    }
    return names.join("/");
  };
  return covered.map((f) => ({
    id: f.id,
    name: f.name,
    parentId: f.parentId !== null && byId.has(f.parentId) ? f.parentId : null,
    path: pathOf(f.id),
    shared: f.shared,
    role: f.role,
  }));
}

/**
 * The covered folder a tool's input names by id or by name (names are case-insensitive; when
 * several covered folders share one, the owner's own wins if it is the only one of theirs),
 * undefined when it names none, and a 404 for any folder outside `folders`.
 */
export function chooseCoveredFolder(
  folders: readonly CoveredFolder[],
  choice: { folderId?: number; folderName?: string },
): CoveredFolder | undefined {
  if (choice.folderId !== undefined) {
    const found = folders.find((f) => f.id === choice.folderId);
    if (!found) throw notFound(`folder ${choice.folderId}`);
    return found;
  }
  if (choice.folderName === undefined) return undefined;
  const key = folderNameKey(choice.folderName);
  const matches = folders.filter((f) => folderNameKey(f.name) === key);
  const own = matches.filter((f) => !f.shared);
  if (matches.length === 0) throw notFound(`folder "${choice.folderName}"`);
  if (matches.length === 1) return matches[0];
  if (own.length === 1) return own[0];
  throw badRequest(
    "ambiguous_folder",
    `${matches.length} folders are named "${choice.folderName}" (${matches.map((f) => `${f.path}: id ${f.id}`).join(", ")}); use folderId`,
  );
}

/** A covered folder and every covered folder below it. */
export function withSubfolders(folders: readonly CoveredFolder[], rootId: number): number[] {
  const ids = [rootId];
  for (let i = 0; i < ids.length; i++) {
    for (const f of folders) if (f.parentId === ids[i]) ids.push(f.id);
  }
  return ids;
}

/**
 * A note the run may read, or write. With `folders: "all"`, as the REST routes decide (the
 * owner's notes and those in folders shared with them; a viewer may not write). With a set, only
 * the owner's notes in those folders; any other note is a 404 exactly like a note that does not
 * exist. Trashed notes are out of the views, so they are 404 too.
 */
export async function noteInGrant({ app, grant }: ToolRunContext, noteId: number, access: "read" | "write"): Promise<NoteRow> {
  if (grant.folders === "all") return (await getAccessibleNote(app.db, grant.ownerId, noteId, access)).row;
  const row = await getOwnedNote(app.db, grant.ownerId, noteId);
  if (!grantCoversFolder(grant, row.folder_id)) throw notFound(`note ${noteId}`);
  return row;
}

/** What a search may look at: the covered folders (`within` narrows to some of them), and the root when the grant covers it. */
export function searchScopeOf({ grant }: ToolRunContext, folders: readonly CoveredFolder[], within?: readonly number[]): SearchScope {
  if (grant.folders === "all") {
    return { ownerId: grant.ownerId, sharedFolderIds: folders.filter((f) => f.shared).map((f) => f.id), folderIds: within };
  }
  return { ownerId: grant.ownerId, folderIds: within ?? folders.map((f) => f.id), root: within === undefined && grant.rootNotes === true };
}
