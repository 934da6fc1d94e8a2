import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import {
  deleteFromTrash,
  dissolveFolder,
  effectiveParents,
  emptyExpiredTrash,
  putFolder,
  putNote,
  readFolders,
  readNotes,
  restoreFromTrash,
  trashDeleteAfter,
  trashFolder,
  trashNote,
  withoutTrashed,
} from "./workspace";

const AT = "2026-03-10T08:00:00.000Z";
const LATER = "2026-03-11T08:00:00.000Z";

function folder(doc: Y.Doc, uuid: string, parent: string | null): void {
  putFolder(doc, uuid, { name: uuid, parent, icon: null, createdAt: AT, updatedAt: AT });
}

describe("effectiveParents", () => {
  it("keeps existing parents, lifts orphans to the top, and cuts a cycle at its smallest uuid", () => {
    const doc = new Y.Doc();
    folder(doc, "a", "c");
    folder(doc, "b", "a");
    folder(doc, "c", "b");
    folder(doc, "d", "a");
    folder(doc, "e", "missing");
    expect(Object.fromEntries(effectiveParents(readFolders(doc)))).toEqual({ a: null, b: "a", c: "b", d: "a", e: null });
  });
});

describe("dissolveFolder", () => {
  it("moves the folder's subfolders and notes up to its parent, dated, and removes it", () => {
    const doc = new Y.Doc();
    folder(doc, "top", null);
    folder(doc, "middle", "top");
    folder(doc, "child", "middle");
    folder(doc, "elsewhere", "top");
    putNote(doc, "n1", { title: "in middle", folder: "middle", createdAt: AT, updatedAt: AT });
    putNote(doc, "n2", { title: "in top", folder: "top", createdAt: AT, updatedAt: AT });

    expect(dissolveFolder(doc, "middle", LATER)).toEqual({ parent: "top", movedFolders: 1, movedNotes: 1 });
    const folders = readFolders(doc);
    expect(folders.has("middle")).toBe(false);
    expect(folders.get("child")).toMatchObject({ parent: "top", updatedAt: LATER });
    expect(folders.get("elsewhere")).toMatchObject({ parent: "top", updatedAt: AT });
    expect(readNotes(doc).get("n1")).toMatchObject({ folder: "top", updatedAt: LATER });
    expect(readNotes(doc).get("n2")).toMatchObject({ folder: "top", updatedAt: AT });
  });

  it("moves a top-level folder's contents to the top level", () => {
    const doc = new Y.Doc();
    folder(doc, "top", null);
    putNote(doc, "n1", { title: "x", folder: "top", createdAt: AT, updatedAt: AT });
    expect(dissolveFolder(doc, "top", LATER)).toEqual({ parent: null, movedFolders: 0, movedNotes: 1 });
    expect(readNotes(doc).get("n1")?.folder).toBeNull();
  });
});

describe("the Trash", () => {
  it("trashes a folder (its contents move up), restores a note to the top when its folder is gone, deletes forever", () => {
    const doc = new Y.Doc();
    folder(doc, "parent", null);
    folder(doc, "box", "parent");
    putNote(doc, "n", { title: "N", folder: "box", pinned: false, tags: [], createdAt: AT, updatedAt: AT });
    expect(trashFolder(doc, "box", LATER)).toEqual({ parent: "parent", movedFolders: 0, movedNotes: 1 });
    expect(readFolders(doc).get("box")?.trashedAt).toBe(LATER);
    expect([...withoutTrashed(readFolders(doc)).keys()]).toEqual(["parent"]);
    expect(readNotes(doc).get("n")?.folder).toBe("parent");

    trashFolder(doc, "parent", LATER);
    trashNote(doc, "n", LATER);
    expect(restoreFromTrash(doc, "n", LATER)).toBe("note");
    expect(readNotes(doc).get("n")).toMatchObject({ trashedAt: null, folder: null });
    expect(restoreFromTrash(doc, "n", LATER)).toBeNull();

    folder(doc, "other", null);
    putFolder(doc, "other", { name: "PARENT" });
    expect(restoreFromTrash(doc, "parent", LATER)).toBe("folder");
    expect(readFolders(doc).get("parent")).toMatchObject({ name: "parent (2)", trashedAt: null });

    expect(deleteFromTrash(doc, "n")).toBe(false);
    expect(deleteFromTrash(doc, "box")).toBe(true);
    expect(readFolders(doc).has("box")).toBe(false);
  });

  it("empties entries 30 days after they were trashed; an unreadable time counts as long ago", () => {
    const doc = new Y.Doc();
    putNote(doc, "old", { title: "old", trashedAt: AT });
    putNote(doc, "odd", { title: "odd" });
    doc.getMap<Y.Map<unknown>>("notes").get("odd")?.set("trashedAt", "yesterday-ish");
    putNote(doc, "live", { title: "live" });
    expect(trashDeleteAfter(AT)).toBe("2026-04-09T08:00:00.000Z");
    expect(emptyExpiredTrash(doc, "2026-04-09T07:59:59.000Z")).toBe(1);
    expect([...readNotes(doc).keys()].sort()).toEqual(["live", "old"]);
    expect(emptyExpiredTrash(doc, "2026-04-09T08:00:00.000Z")).toBe(1);
    expect([...readNotes(doc).keys()]).toEqual(["live"]);
  });
});
