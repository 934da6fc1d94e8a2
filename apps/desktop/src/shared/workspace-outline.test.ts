import type { FolderMeta, NoteMeta } from "@tandem/core/documents";
import { describe, expect, it } from "vitest";
import { decodeWorkspaceOutline, encodeFirstScreen, encodeWorkspaceOutline, FIRST_SCREEN_NOTES } from "./workspace-outline";

const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 0, minute)).toISOString();
const note = (fields: Partial<NoteMeta>): NoteMeta => ({
  title: "",
  folder: null,
  pinned: false,
  tags: [],
  createdAt: at(0),
  updatedAt: at(0),
  trashedAt: null,
  ...fields,
});
const folder: FolderMeta = { name: "Projects", parent: null, icon: "📁", createdAt: at(0), updatedAt: at(0), trashedAt: null };

describe("the workspace outline's text", () => {
  it("round-trips every field, the Trash's entries too", () => {
    const notes = new Map([
      ["n1", note({ title: "سلام 👋", folder: "f1", pinned: true, tags: ["a", "b"], updatedAt: at(5) })],
      ["n2", note({ title: 'Quote "this"', trashedAt: at(9) })],
    ]);
    const folders = new Map([["f1", folder]]);
    const outline = decodeWorkspaceOutline(encodeWorkspaceOutline(notes, folders));
    expect(outline?.complete).toBe(true);
    expect(outline?.notes).toEqual(notes);
    expect(outline?.folders).toEqual(folders);
  });

  it("keeps the list's first notes in its order for the first screen: pinned first, then the most recently updated", () => {
    const notes = new Map<string, NoteMeta>();
    for (let i = 0; i < FIRST_SCREEN_NOTES + 50; i++) notes.set(`n${String(i).padStart(3, "0")}`, note({ updatedAt: at(i) }));
    notes.set("old-pinned", note({ pinned: true, updatedAt: at(0) }));
    notes.set("trashed", note({ updatedAt: at(999), trashedAt: at(999) }));
    const first = decodeWorkspaceOutline(encodeFirstScreen(notes, new Map([["f1", folder]])));
    expect(first?.complete).toBe(false);
    const uuids = [...(first?.notes.keys() ?? [])];
    expect(uuids).toHaveLength(FIRST_SCREEN_NOTES);
    expect(uuids.slice(0, 3)).toEqual(["old-pinned", "n149", "n148"]);
    expect(uuids).not.toContain("trashed");
    expect(first?.folders.get("f1")).toEqual(folder);
  });

  it("reads as none what is damaged or of another format", () => {
    const good = encodeWorkspaceOutline(new Map([["n1", note({ title: "T", tags: ["a"] })]]), new Map([["f1", folder]]));
    expect(decodeWorkspaceOutline(good)).not.toBeNull();
    for (const damaged of [
      "",
      "{not json",
      JSON.stringify({ notes: [], folders: [] }),
      good.slice(0, -5),
      good.replace('"T"', "7"),
      good.replace('["a"]', "[1]"),
      good.replace('"Projects"', "null"),
      good.replace('"complete":true', '"complete":"yes"'),
      '{"format":2,"complete":true,"notes":{},"folders":[]}',
      '{"format":2,"complete":true,"notes":[["n"]],"folders":[]}',
    ])
      expect(decodeWorkspaceOutline(damaged), damaged.slice(0, 40)).toBeNull();
  });
});
