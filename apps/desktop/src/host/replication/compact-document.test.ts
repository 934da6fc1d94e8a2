import { putNote, readNotes } from "@tandem/core";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { compactDocument } from "./compact-document";

const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 0, minute)).toISOString();

/** A workspace as a host loads it: decoded from an update (where Yjs over-allocates). */
function loadedWorkspace(notes: number): Y.Doc {
  const source = new Y.Doc();
  source.transact(() => {
    for (let i = 0; i < notes; i++)
      putNote(source, `note-${i}`, {
        title: `Note ${i}`,
        folder: "folder-a",
        pinned: i === 0,
        tags: ["x"],
        createdAt: at(i),
        updatedAt: at(i),
      });
  });
  const loaded = new Y.Doc();
  Y.applyUpdate(loaded, Y.encodeStateAsUpdate(source));
  return loaded;
}

describe("compactDocument", () => {
  it("leaves the content and its encoding as they were", () => {
    const doc = loadedWorkspace(50);
    const [before, notesBefore] = [Y.encodeStateAsUpdate(doc), readNotes(doc)];
    expect(compactDocument(doc)).toBeGreaterThan(50);
    expect(Y.encodeStateAsUpdate(doc)).toEqual(before);
    expect(readNotes(doc)).toEqual(notesBefore);
  });

  it("keeps the document working: changes, observers and sync after it", () => {
    const doc = loadedWorkspace(10);
    compactDocument(doc);
    const changed: string[] = [];
    const notes = doc.getMap("notes");
    notes.observeDeep((events) => {
      for (const event of events) for (const key of event.keys.keys()) changed.push(key);
    });
    putNote(doc, "note-3", { title: "Renamed" });
    notes.delete("note-4");
    expect(changed).toEqual(expect.arrayContaining(["title", "note-4"]));
    expect(readNotes(doc).get("note-3")?.title).toBe("Renamed");
    expect(readNotes(doc).has("note-4")).toBe(false);
    const peer = new Y.Doc();
    Y.applyUpdate(peer, Y.encodeStateAsUpdate(doc));
    expect(readNotes(peer)).toEqual(readNotes(doc));
  });

  it("visits only what was added since it last ran", () => {
    const doc = loadedWorkspace(20);
    expect(compactDocument(doc)).toBeGreaterThan(0);
    expect(compactDocument(doc)).toBe(0);
    putNote(doc, "note-new", { title: "New", folder: null, pinned: false, tags: [], createdAt: at(99), updatedAt: at(99) });
    const added = compactDocument(doc);
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThan(10);
  });
});
