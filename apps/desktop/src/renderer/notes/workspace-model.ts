import {
  effectiveParents,
  type FolderMeta,
  folderNameKey,
  folderNameProblem,
  type NoteMeta,
  readFolders,
  readNotes,
  withoutTrashed,
} from "@tandem/core/documents";
import type * as Y from "yjs";
import { byCodeUnits, byListOrder, type WorkspaceOutline } from "../../shared/workspace-outline";

/** The workspace document as the notes view reads it: the folders and notes not in the Trash, and the Trash. */
export interface Workspace {
  readonly folders: ReadonlyMap<string, FolderMeta>;
  readonly notes: ReadonlyMap<string, NoteMeta>;
  readonly tree: readonly FolderNode[];
  readonly trash: readonly TrashItem[];
}

export interface TrashItem {
  readonly uuid: string;
  readonly kind: "note" | "folder";
  readonly title: string;
  readonly trashedAt: string;
}

export interface FolderNode {
  readonly uuid: string;
  readonly name: string;
  readonly depth: number;
  readonly children: readonly FolderNode[];
}

export interface NoteItem extends NoteMeta {
  readonly uuid: string;
}

/** Which notes the list shows: every note, those directly in one folder, or the Trash. */
export type FolderSelection = { readonly kind: "all" } | { readonly kind: "folder"; readonly uuid: string } | { readonly kind: "trash" };

export const ALL_NOTES: FolderSelection = Object.freeze({ kind: "all" });

const EMPTY_WORKSPACE: Workspace = Object.freeze({ folders: new Map(), notes: new Map(), tree: [], trash: [] });

export { EMPTY_WORKSPACE };

export function readWorkspace(doc: Y.Doc): Workspace {
  return workspaceOf(readFolders(doc), readNotes(doc));
}

/** The workspace as the host's outline has it (see `getWorkspaceOutline`): the first view, before the document has loaded. */
export function workspaceFromOutline(outline: WorkspaceOutline): Workspace {
  return workspaceOf(outline.folders, outline.notes);
}

function workspaceOf(allFolders: ReadonlyMap<string, FolderMeta>, allNotes: ReadonlyMap<string, NoteMeta>): Workspace {
  const folders = withoutTrashed(allFolders);
  const trash: TrashItem[] = [];
  for (const [uuid, meta] of allNotes)
    if (meta.trashedAt !== null) trash.push({ uuid, kind: "note", title: displayTitle(meta.title), trashedAt: meta.trashedAt });
  for (const [uuid, meta] of allFolders)
    if (meta.trashedAt !== null) trash.push({ uuid, kind: "folder", title: meta.name, trashedAt: meta.trashedAt });
  // Most recently trashed first, as the server's GET /os/trash lists them.
  trash.sort((a, b) => byCodeUnits(b.trashedAt, a.trashedAt) || byCodeUnits(a.uuid, b.uuid));
  return { folders, notes: withoutTrashed(allNotes), tree: folderTree(folders), trash };
}

/** Whether a note is in the Trash (as opposed to listed, or deleted for good). */
export function isTrashedNote(workspace: Workspace, uuid: string): boolean {
  return workspace.trash.some((item) => item.kind === "note" && item.uuid === uuid);
}

const byName = (a: { name: string; uuid: string }, b: { name: string; uuid: string }) =>
  a.name.localeCompare(b.name, undefined, { sensitivity: "base", numeric: true }) || a.uuid.localeCompare(b.uuid);

/** Nested folders in name order; parents resolved as the server resolves them (orphans and cycles at the top). */
export function folderTree(folders: ReadonlyMap<string, FolderMeta>): FolderNode[] {
  const parents = effectiveParents(new Map(folders));
  const children = new Map<string | null, { uuid: string; name: string }[]>();
  for (const [uuid, meta] of folders) {
    const parent = parents.get(uuid) ?? null;
    const siblings = children.get(parent) ?? [];
    siblings.push({ uuid, name: meta.name });
    children.set(parent, siblings);
  }
  const build = (parent: string | null, depth: number): FolderNode[] =>
    (children.get(parent) ?? []).sort(byName).map(({ uuid, name }) => ({ uuid, name, depth, children: build(uuid, depth + 1) }));
  return build(null, 0);
}

/** Every folder in tree order, for pickers ("Move to"). */
export function flattenTree(tree: readonly FolderNode[]): FolderNode[] {
  return tree.flatMap((node) => [node, ...flattenTree(node.children)]);
}

/** The folder a note effectively lives in: its own when it exists, else the top level. */
export function noteFolder(workspace: Workspace, note: NoteMeta): string | null {
  return note.folder !== null && workspace.folders.has(note.folder) ? note.folder : null;
}

/** The notes a selection shows, pinned first, then the most recently updated (as the server lists them). */
export function notesIn(workspace: Workspace, selection: FolderSelection): NoteItem[] {
  const items: NoteItem[] = [];
  for (const [uuid, meta] of workspace.notes) {
    if (selection.kind === "folder" && noteFolder(workspace, meta) !== selection.uuid) continue;
    items.push({ uuid, ...meta });
  }
  return items.sort(byListOrder);
}

/** Why `name` cannot name a new or renamed folder under `parent`, or null when it can. */
export function folderNameIssue(workspace: Workspace, name: string, parent: string | null, except?: string): string | null {
  const problem = folderNameProblem(name);
  if (problem) return `The name ${problem}.`;
  const key = folderNameKey(name);
  for (const [uuid, meta] of workspace.folders) {
    const sameParent = (meta.parent !== null && workspace.folders.has(meta.parent) ? meta.parent : null) === parent;
    if (uuid !== except && sameParent && folderNameKey(meta.name) === key) return `A folder named "${meta.name}" is already there.`;
  }
  return null;
}

/** A note's title for display: the blank ones are "Untitled". */
export function displayTitle(title: string): string {
  return title.trim() === "" ? "Untitled" : title;
}
