import { putNote, readNotes, TRASH_RETENTION_DAYS, workspaceDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

describe("the Trash", () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
  });
  afterAll(() => t.stop());

  async function create(title: string, content: string, folderId?: number) {
    return (await alice.client.call("createNote", { body: { title, content, folderId } })).result.note;
  }

  async function everywhere(word: string) {
    // Memory search reads the same search index as searchNotes, so it follows too.
    const [list, search, grep, summary, status] = await Promise.all([
      alice.client.call("listNotes", { query: {} }),
      alice.client.call("searchNotes", { body: { query: word } }),
      alice.client.call("grepNotes", { body: { pattern: word } }),
      alice.client.call("notesSummary", { query: { limit: 20 } }),
      alice.client.call("status"),
    ]);
    return {
      listed: list.notes.map((n) => n.title),
      searched: search.results.map((r) => r.title),
      grepped: grep.results.map((r) => r.title),
      summarised: summary.notes.map((n: { title: string }) => n.title),
      totalFiles: status.contextCount,
    };
  }

  it("DELETE /os/notes/:id moves a note to the Trash: it leaves every listing, search and grep, and the document keeps it", async () => {
    const note = await create("Quokka plans", "quokka quokka quokka");
    const before = await everywhere("quokka");
    expect(before).toMatchObject({ listed: ["Quokka plans"], searched: ["Quokka plans"], grepped: ["Quokka plans"] });
    expect(before.summarised).toContain("Quokka plans");

    const trashed = await alice.client.call("trashNote", { params: { id: note.id } });
    expect(trashed).toMatchObject({ success: true, uuid: note.uuid });

    const after = await everywhere("quokka");
    expect(after).toEqual({ listed: [], searched: [], grepped: [], summarised: [], totalFiles: before.totalFiles - 1 });
    expect((await alice.client.raw("getNote", { params: { id: note.id } })).status).toBe(404);
    // Again: it is no longer there to trash.
    expect((await alice.client.raw("trashNote", { params: { id: note.id } })).status).toBe(404);

    // The workspace document still holds the entry, marked, so every device agrees.
    const workspace = await openDoc(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    expect(readNotes(workspace.doc).get(note.uuid)).toMatchObject({ title: "Quokka plans", trashedAt: trashed.trashedAt });
    workspace.close();

    const { items } = await alice.client.call("listTrash");
    expect(items).toContainEqual({
      uuid: note.uuid,
      kind: "note",
      title: "Quokka plans",
      trashedAt: trashed.trashedAt,
      deleteAfter: new Date(Date.parse(trashed.trashedAt) + TRASH_RETENTION_DAYS * 86_400_000).toISOString(),
    });

    const restored = await alice.client.call("restoreFromTrash", { params: { uuid: note.uuid } });
    expect(restored.kind).toBe("note");
    expect((await everywhere("quokka")).searched).toEqual(["Quokka plans"]);
    const { note: back } = await alice.client.call("getNote", { params: { id: restored.id as number } });
    expect(back).toMatchObject({ uuid: note.uuid, title: "Quokka plans" });
    expect(back.markdown).toContain("quokka quokka");
    expect((await alice.client.call("listTrash")).items.map((i) => i.uuid)).not.toContain(note.uuid);
  });

  it("a note trashed over sync by another device leaves the views too", async () => {
    const note = await create("Wombat list", "wombat");
    const workspace = await openDoc(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    const entry = workspace.doc.getMap<import("yjs").Map<unknown>>("notes").get(note.uuid);
    entry?.set("trashedAt", new Date().toISOString());
    await expect.poll(async () => (await everywhere("wombat")).searched, { timeout: 10_000 }).toEqual([]);
    workspace.close();
    expect((await alice.client.call("listTrash")).items.map((i) => i.title)).toContain("Wombat list");
  });

  it("DELETE /os/folders/:id moves the folder to the Trash and keeps its notes (the same answer as before)", async () => {
    const { folder } = await alice.client.call("createFolder", { body: { name: "Archive" } });
    await create("Kept inside", "inside", folder.id);
    const answer = await alice.client.call("deleteFolder", { params: { id: folder.id } });
    expect(answer).toMatchObject({ success: true, movedNotes: 1, movedFolders: 0, movedTo: null });
    const { folders } = await alice.client.call("listFolders", { query: {} });
    expect(folders.map((f: { name: string }) => f.name)).not.toContain("Archive");
    expect((await alice.client.call("listNotes", { query: {} })).notes.map((n) => n.title)).toContain("Kept inside");
    // A new folder may take the trashed one's name.
    await alice.client.call("createFolder", { body: { name: "Archive" } });

    const trashed = (await alice.client.call("listTrash")).items.find((i) => i.kind === "folder" && i.title === "Archive");
    expect(trashed).toBeDefined();
    const restored = await alice.client.call("restoreFromTrash", { params: { uuid: trashed?.uuid as string } });
    expect(restored.kind).toBe("folder");
    const again = await alice.client.call("listFolders", { query: {} });
    // The new "Archive" took the name meanwhile: the restored one is numbered.
    expect(again.folders.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(["Archive", "Archive (2)"]));
  });

  it("restoring a trashed folder undoes the delete: its subfolders and notes go back in, unless moved elsewhere since", async () => {
    const { folder: goals } = await alice.client.call("createFolder", { body: { name: "Goals" } });
    const { folder: self } = await alice.client.call("createFolder", { body: { name: "Self", parentId: goals.id } });
    const { folder: later } = await alice.client.call("createFolder", { body: { name: "Later", parentId: goals.id } });
    const inSelf = await create("Run a marathon", "someday", self.id);
    const direct = await create("Yearly goals", "learn Dutch", goals.id);
    const answer = await alice.client.call("deleteFolder", { params: { id: goals.id } });
    // The count says one of each, in words that agree with it.
    expect(answer).toMatchObject({ movedNotes: 1, movedFolders: 2, movedTo: null });
    expect(answer.message).toBe("Folder moved to the Trash; 1 note and 2 folders moved to the top level");
    // Meanwhile "Later" is moved somewhere on purpose: that wish stays.
    const { folder: elsewhere } = await alice.client.call("createFolder", { body: { name: "Elsewhere" } });
    await alice.client.call("updateFolder", { params: { id: later.id }, body: { parentId: elsewhere.id } });

    const trashed = (await alice.client.call("listTrash")).items.find((i) => i.kind === "folder" && i.title === "Goals");
    const restored = await alice.client.call("restoreFromTrash", { params: { uuid: trashed?.uuid as string } });
    const { folders } = await alice.client.call("listFolders", { query: {} });
    const byName = new Map(folders.map((f: { name: string; id: number; parentId: number | null }) => [f.name, f]));
    expect(byName.get("Goals")).toMatchObject({ id: restored.id, parentId: null });
    expect(byName.get("Self")).toMatchObject({ parentId: restored.id });
    expect(byName.get("Later")).toMatchObject({ parentId: elsewhere.id });
    const folderOf = async (id: number) => (await alice.client.call("getNote", { params: { id } })).note.folderId;
    expect(await folderOf(direct.id)).toBe(restored.id);
    expect(await folderOf(inSelf.id)).toBe(self.id);
  });

  it("deletes forever, answers 404 for what is not in the Trash, and keeps each owner's Trash private", async () => {
    const note = await create("Doomed", "gone soon");
    await alice.client.call("trashNote", { params: { id: note.id } });
    expect((await bob.client.raw("restoreFromTrash", { params: { uuid: note.uuid } })).status).toBe(404);
    expect((await bob.client.raw("deleteFromTrash", { params: { uuid: note.uuid } })).status).toBe(404);
    expect((await bob.client.call("listTrash")).items).toEqual([]);
    expect((await bob.client.raw("trashNote", { params: { id: note.id } })).status).toBe(404);

    const live = await create("Alive", "alive");
    expect((await alice.client.raw("deleteFromTrash", { params: { uuid: live.uuid } })).status).toBe(404);
    expect((await alice.client.raw("restoreFromTrash", { params: { uuid: live.uuid } })).status).toBe(404);
    const bad = await t.fetch("/api/v1/os/trash/not-a-uuid", { method: "DELETE", headers: { authorization: `Bearer ${alice.apiKey}` } });
    expect(bad.status).toBe(400);

    expect(await alice.client.call("deleteFromTrash", { params: { uuid: note.uuid } })).toMatchObject({ success: true });
    expect((await alice.client.call("listTrash")).items.map((i) => i.uuid)).not.toContain(note.uuid);
    const workspace = await openDoc(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    expect(readNotes(workspace.doc).has(note.uuid)).toBe(false);
    workspace.close();
  });

  it("restores an entry naming another owner's note without taking it (no id, no 500)", async () => {
    const bobs = (await bob.client.call("createNote", { body: { title: "Bob's", content: "mine" } })).result.note;
    const workspace = await openDoc(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    workspace.doc.transact(() =>
      putNote(workspace.doc, bobs.uuid, { title: "Claimed", folder: null, trashedAt: new Date().toISOString() }),
    );
    await expect
      .poll(async () => (await alice.client.call("listTrash")).items.map((i) => i.title), { timeout: 10_000 })
      .toContain("Claimed");
    workspace.close();
    expect(await alice.client.call("restoreFromTrash", { params: { uuid: bobs.uuid } })).toMatchObject({ kind: "note", id: null });
    expect((await bob.client.call("getNote", { params: { id: bobs.id } })).note.title).toBe("Bob's");
  });

  it("empties what has been in the Trash for more than 30 days", async () => {
    const old = await create("Old news", "old");
    await alice.client.call("trashNote", { params: { id: old.id } });
    t.server.context.clock.advance((TRASH_RETENTION_DAYS - 1) * 86_400_000);
    const recent = await create("Recent news", "recent");
    await alice.client.call("trashNote", { params: { id: recent.id } });
    await t.server.context.maintenance.runAll();
    expect((await alice.client.call("listTrash")).items.map((i) => i.title)).toContain("Old news");

    t.server.context.clock.advance(2 * 86_400_000);
    await t.server.context.maintenance.runAll();
    const titles = (await alice.client.call("listTrash")).items.map((i) => i.title);
    expect(titles).not.toContain("Old news");
    expect(titles).toContain("Recent news");
  });
});
