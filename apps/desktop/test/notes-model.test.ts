import { putFolder, putNote, readFolders, readNotes } from "@tandem/core/documents";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import {
  createFolder,
  createNote,
  deleteFolder,
  deleteForever,
  deleteNote,
  moveNote,
  recreateNote,
  renameFolder,
  restoreTrashed,
  setNotePinned,
  setNoteTitle,
  touchNote,
} from "../src/renderer/notes/workspace-actions";
import {
  ALL_NOTES,
  displayTitle,
  type FolderNode,
  flattenTree,
  folderNameIssue,
  notesIn,
  readWorkspace,
} from "../src/renderer/notes/workspace-model";

// Fixed uuids, ordered: a < b < c, so the cycle rule (cut at the smallest uuid) is predictable.
const A = "aaaaaaaa-0000-4000-8000-000000000000";
const B = "bbbbbbbb-0000-4000-8000-000000000000";
const C = "cccccccc-0000-4000-8000-000000000000";
const AT = "2026-03-10T08:00:00.000Z";

function folder(doc: Y.Doc, uuid: string, name: string, parent: string | null): void {
  putFolder(doc, uuid, { name, parent, icon: null, createdAt: AT, updatedAt: AT });
}

function note(doc: Y.Doc, uuid: string, fields: { title: string; folder?: string | null; pinned?: boolean; updatedAt: string }): void {
  putNote(doc, uuid, { folder: null, pinned: false, tags: [], createdAt: AT, ...fields });
}

/** The tree as `name(children…)` strings, for compact comparisons. */
function shape(nodes: readonly FolderNode[]): string[] {
  return nodes.map((node) => (node.children.length ? `${node.name}(${shape(node.children).join(",")})` : node.name));
}

describe("the folder tree", () => {
  it("nests folders under their parents, in natural name order", () => {
    const doc = new Y.Doc();
    folder(doc, A, "Projects", null);
    folder(doc, B, "2026", A);
    folder(doc, C, "archive", null);
    folder(doc, crypto.randomUUID(), "Project 10", A);
    folder(doc, crypto.randomUUID(), "Project 9", A);
    const { tree } = readWorkspace(doc);
    expect(shape(tree)).toEqual(["archive", "Projects(2026,Project 9,Project 10)"]);
    expect(flattenTree(tree).map((node) => [node.name, node.depth])).toEqual([
      ["archive", 0],
      ["Projects", 0],
      ["2026", 1],
      ["Project 9", 1],
      ["Project 10", 1],
    ]);
  });

  it("shows a folder whose parent is gone, and a cycle from concurrent moves, at the top level", () => {
    const doc = new Y.Doc();
    folder(doc, A, "A", B);
    folder(doc, B, "B", A);
    folder(doc, C, "Orphan", crypto.randomUUID());
    // Walking in uuid order, A is the first folder found on the cycle: it is cut loose, B stays under it.
    expect(shape(readWorkspace(doc).tree)).toEqual(["A(B)", "Orphan"]);
  });
});

describe("the note list", () => {
  it("puts pinned notes first, then the most recently changed", () => {
    const doc = new Y.Doc();
    note(doc, A, { title: "old", updatedAt: "2026-03-01T00:00:00.000Z" });
    note(doc, B, { title: "new", updatedAt: "2026-03-09T00:00:00.000Z" });
    note(doc, C, { title: "pinned but old", pinned: true, updatedAt: "2026-01-01T00:00:00.000Z" });
    expect(notesIn(readWorkspace(doc), ALL_NOTES).map((item) => item.title)).toEqual(["pinned but old", "new", "old"]);
  });

  it("shows a folder's own notes; a note in a missing folder only under All notes", () => {
    const doc = new Y.Doc();
    folder(doc, A, "Work", null);
    folder(doc, B, "Inner", A);
    note(doc, crypto.randomUUID(), { title: "in work", folder: A, updatedAt: AT });
    note(doc, crypto.randomUUID(), { title: "in inner", folder: B, updatedAt: AT });
    note(doc, crypto.randomUUID(), { title: "lost", folder: C, updatedAt: AT });
    const workspace = readWorkspace(doc);
    expect(notesIn(workspace, { kind: "folder", uuid: A }).map((item) => item.title)).toEqual(["in work"]);
    expect(
      notesIn(workspace, ALL_NOTES)
        .map((item) => item.title)
        .sort(),
    ).toEqual(["in inner", "in work", "lost"]);
  });

  it("calls a blank title Untitled", () => {
    expect(displayTitle("  ")).toBe("Untitled");
    expect(displayTitle("Plan")).toBe("Plan");
  });
});

describe("folder names", () => {
  const doc = new Y.Doc();
  folder(doc, A, "Projects", null);
  folder(doc, B, "Drafts", A);
  const workspace = readWorkspace(doc);

  it.each([
    ["", null, "must not be empty"],
    ["a/b", null, "'/'"],
    ["projects", null, 'A folder named "Projects" is already there.'],
    [" DRAFTS ", A, 'A folder named "Drafts" is already there.'],
  ])("refuses %j under %s", (name, parent, problem) => {
    expect(folderNameIssue(workspace, name, parent)).toContain(problem);
  });

  it("accepts a name used elsewhere in the tree, and a folder keeping its own name", () => {
    expect(folderNameIssue(workspace, "Drafts", null)).toBeNull();
    expect(folderNameIssue(workspace, "drafts", A, B)).toBeNull();
  });
});

describe("workspace changes", () => {
  it("creates a note with every field, in the chosen folder", () => {
    const doc = new Y.Doc();
    const uuid = createNote(doc, A);
    const created = readNotes(doc).get(uuid);
    expect(created).toMatchObject({ title: "", folder: A, pinned: false, tags: [] });
    expect(created?.createdAt).toBe(created?.updatedAt);
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("dates every change to a note, and never brings a note deleted for good back", async () => {
    const doc = new Y.Doc();
    const uuid = createNote(doc, null);
    const changes: [string, (doc: Y.Doc) => void][] = [
      ["title", (d) => setNoteTitle(d, uuid, "Renamed")],
      ["pin", (d) => setNotePinned(d, uuid, true)],
      ["move", (d) => moveNote(d, uuid, A)],
      ["body edit", (d) => touchNote(d, uuid)],
    ];
    for (const [what, change] of changes) {
      const before = readNotes(doc).get(uuid)?.updatedAt ?? "";
      await new Promise((resolve) => setTimeout(resolve, 2));
      change(doc);
      expect((readNotes(doc).get(uuid)?.updatedAt ?? "") > before, what).toBe(true);
    }
    expect(readNotes(doc).get(uuid)).toMatchObject({ title: "Renamed", pinned: true, folder: A });
    deleteNote(doc, uuid);
    deleteForever(doc, uuid);
    touchNote(doc, uuid);
    expect(readNotes(doc).has(uuid)).toBe(false);
  });

  it("moves notes and folders to the Trash, lists the Trash newest first, restores and deletes forever", async () => {
    const doc = new Y.Doc();
    folder(doc, A, "Top", null);
    const first = createNote(doc, A);
    setNoteTitle(doc, first, "First");
    deleteNote(doc, first);
    await new Promise((resolve) => setTimeout(resolve, 2));
    deleteFolder(doc, A);
    const workspace = readWorkspace(doc);
    expect(workspace.notes.has(first)).toBe(false);
    expect(workspace.folders.has(A)).toBe(false);
    expect(workspace.trash.map((item) => [item.kind, item.title])).toEqual([
      ["folder", "Top"],
      ["note", "First"],
    ]);
    // The note's folder is in the Trash too: it comes back at the top level.
    restoreTrashed(doc, first);
    expect(readWorkspace(doc).notes.get(first)).toMatchObject({ folder: null, trashedAt: null });
    deleteForever(doc, A);
    expect(readWorkspace(doc).trash).toEqual([]);
    // A note deleted for good elsewhere while open here comes back from what this window knew.
    const meta = readNotes(doc).get(first);
    deleteNote(doc, first);
    deleteForever(doc, first);
    recreateNote(doc, first, meta as NonNullable<typeof meta>);
    expect(readWorkspace(doc).notes.get(first)).toMatchObject({ title: "First", trashedAt: null });
  });

  it("creates and renames folders, trimming names", () => {
    const doc = new Y.Doc();
    const uuid = createFolder(doc, "  Inbox ", null);
    renameFolder(doc, uuid, " Archive  ");
    expect(readFolders(doc).get(uuid)).toMatchObject({ name: "Archive", parent: null, icon: null });
  });

  it("moves a folder to the Trash without losing its notes or subfolders: they move up to its parent", () => {
    const doc = new Y.Doc();
    folder(doc, A, "Top", null);
    folder(doc, B, "Middle", A);
    folder(doc, C, "Bottom", B);
    note(doc, "dddddddd-0000-4000-8000-000000000000", { title: "in middle", folder: B, updatedAt: AT });
    deleteFolder(doc, B);
    expect(readFolders(doc).get(B)?.trashedAt).toEqual(expect.any(String));
    expect(readWorkspace(doc).folders.has(B)).toBe(false);
    expect(readFolders(doc).get(C)?.parent).toBe(A);
    expect(readNotes(doc).get("dddddddd-0000-4000-8000-000000000000")?.folder).toBe(A);
  });
});
