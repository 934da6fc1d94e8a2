import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { dissolveFolder, effectiveParents, putFolder, putNote, readFolders, readNotes } from "./workspace";

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
