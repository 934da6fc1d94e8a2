import { jsonToText, noteDocName, readNoteBody, writeNoteBody } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

/** Long enough for a loaded machine; nothing here measures time. */
const PATIENCE = { timeout: 20_000, interval: 100 };

describe.each(storages("shared folders"))("shared folders (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let folderId: number;
  let noteId: number;

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    [alice, bob, carol] = [await t.addUser("alice"), await t.addUser("bob"), await t.addUser("carol")];
    folderId = (await alice.client.call("createFolder", { body: { path: "Team/Plans" } })).folder.id;
    const team = (await alice.client.call("listFolders", { query: { parentId: "root" } })).folders.find((f) => f.name === "Team");
    noteId = (await alice.client.call("createNote", { body: { title: "Roadmap", content: "shared pelican plans", folderId } })).result.note
      .id;
    const shared = await alice.client.raw("shareFolder", { params: { id: team?.id as number }, body: { username: "bob", role: "viewer" } });
    expect(shared.status).toBe(201);
  });
  afterAll(() => t.stop());

  it("shows the shared tree to the grantee with shared and role", async () => {
    const { folders } = await bob.client.call("listFolders");
    expect(folders.map((f) => [f.name, f.shared, f.role])).toEqual(
      expect.arrayContaining([
        ["Team", true, "viewer"],
        ["Plans", true, "viewer"],
      ]),
    );
    const top = await bob.client.call("listFolders", { query: { parentId: "root" } });
    expect(top.folders.map((f) => f.name)).toEqual(["Team"]);
    const notes = await bob.client.call("listNotes", { query: { folderId } });
    expect(notes.notes.map((n) => n.title)).toEqual(["Roadmap"]);
    expect((await bob.client.call("getNote", { params: { id: noteId } })).note).toMatchObject({ shared: true, role: "viewer" });
  });

  it("includes readable shared folders in search and grep", async () => {
    expect((await bob.client.call("searchNotes", { body: { query: "pelican" } })).results.map((r) => r.id)).toEqual([noteId]);
    expect((await bob.client.call("grepNotes", { body: { pattern: "pelican" } })).results.map((r) => r.noteId)).toEqual([noteId]);
    expect((await carol.client.call("searchNotes", { body: { query: "pelican" } })).results).toEqual([]);
  });

  it("refuses writes to a viewer with 403 and leaves the note unchanged", async () => {
    const patch = await bob.client.raw("updateNote", { params: { id: noteId }, body: { content: "<p>vandalised</p>" } });
    expect(patch.status).toBe(403);
    expect(patch.body).toMatchObject({ error: "read_only" });
    expect((await bob.client.raw("pinNote", { params: { id: noteId }, body: { pinned: true } })).status).toBe(403);
    expect((await bob.client.raw("createNote", { body: { title: "x", content: "x", folderId } })).status).toBe(403);
    expect((await alice.client.call("getNote", { params: { id: noteId } })).note.markdown).toContain("pelican");
  });

  it("lets a viewer read over sync but not write", async () => {
    const { note } = await alice.client.call("getNote", { params: { id: noteId } });
    const viewer = await openDoc(t.server.syncUrl, bob.apiKey, note.docName);
    try {
      expect(viewer.outcome).toBe("synced");
      expect(jsonToText(readNoteBody(viewer.doc))).toContain("pelican");
      writeNoteBody(viewer.doc, { type: "doc", content: [{ type: "paragraph", content: [{ type: "text", text: "sneaky edit" }] }] });
      const probe = await openDoc(t.server.syncUrl, alice.apiKey, note.docName);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(jsonToText(readNoteBody(probe.doc))).not.toContain("sneaky");
      probe.close();
    } finally {
      viewer.close();
    }
    const stranger = await openDoc(t.server.syncUrl, carol.apiKey, note.docName);
    stranger.close();
    expect(stranger.outcome).toBe("refused");
  });

  it("lets an editor write; what an editor creates belongs to the folder's owner", async () => {
    const team = (await alice.client.call("listFolders", { query: { parentId: "root" } })).folders.find((f) => f.name === "Team");
    const upgraded = await alice.client.raw("shareFolder", {
      params: { id: team?.id as number },
      body: { username: "bob", role: "editor" },
    });
    expect(upgraded.status).toBe(200);
    await bob.client.call("updateNote", { params: { id: noteId }, body: { content: "<p>edited by bob</p>" } });
    expect((await alice.client.call("getNote", { params: { id: noteId } })).note.markdown).toContain("edited by bob");
    const created = (await bob.client.call("createNote", { body: { title: "Bob's idea", content: "x", folderId } })).result.note;
    expect((await alice.client.call("listNotes", { query: { folderId } })).notes.map((n) => n.id)).toContain(created.id);
    const moveOut = await bob.client.raw("moveNote", { params: { id: created.id }, body: { folderId: null } });
    expect(moveOut.status).toBe(400);
    expect(moveOut.body).toMatchObject({ error: "cross_workspace_move" });
  });

  it("answers 404 to everyone else, and after unsharing", async () => {
    expect((await carol.client.raw("getNote", { params: { id: noteId } })).status).toBe(404);
    expect((await carol.client.raw("listFolders", { query: { parentId: folderId } })).status).toBe(404);
    expect((await bob.client.raw("listFolderShares", { params: { id: folderId } })).status).toBe(404);
    expect((await bob.client.raw("shareFolder", { params: { id: folderId }, body: { username: "carol", role: "editor" } })).status).toBe(
      404,
    );
    const team = (await alice.client.call("listFolders", { query: { parentId: "root" } })).folders.find((f) => f.name === "Team");
    expect((await alice.client.call("listFolderShares", { params: { id: team?.id as number } })).shares).toEqual([
      expect.objectContaining({ username: "bob", role: "editor" }),
    ]);
    expect(
      (await alice.client.raw("shareFolder", { params: { id: team?.id as number }, body: { username: "alice", role: "viewer" } })).status,
    ).toBe(400);
    expect(
      (await alice.client.raw("shareFolder", { params: { id: team?.id as number }, body: { username: "nobody", role: "viewer" } })).status,
    ).toBe(404);
    await alice.client.call("unshareFolder", { params: { id: team?.id as number, username: "bob" } });
    expect((await bob.client.raw("getNote", { params: { id: noteId } })).status).toBe(404);
    expect((await bob.client.call("listFolders")).folders).toEqual([]);
  });

  describe("Memory is never shared (issue #23, point 8)", () => {
    /** Alice's checklist (Memory/Self/HEARTBEAT.md), Memory/Self/USER, and the ids of Memory and Memory/Self. */
    let memory: { id: number; selfId: number; checklistId: number; userNoteId: number };

    beforeAll(async () => {
      const checklist = await alice.client.call("putHeartbeatInstructions", { body: { content: "- Carry out what this list says" } });
      const checklistId = checklist.noteId as number;
      const selfId = (await alice.client.call("getNote", { params: { id: checklistId } })).note.folderId as number;
      const top = await alice.client.call("listFolders", { query: { parentId: "root" } });
      const id = top.folders.find((f) => f.name === "Memory")?.id as number;
      const userNote = await alice.client.call("createNote", { body: { title: "USER", content: "Alice counts herons", folderId: selfId } });
      memory = { id, selfId, checklistId, userNoteId: userNote.result.note.id };
    });

    it("refuses to share Memory or a folder inside it with 409 memory_not_shareable, and stores nothing", async () => {
      for (const folderId of [memory.id, memory.selfId]) {
        for (const role of ["viewer", "editor"] as const) {
          const refused = await alice.client.raw("shareFolder", { params: { id: folderId }, body: { username: "carol", role } });
          expect([refused.status, refused.body]).toEqual([
            409,
            expect.objectContaining({ success: false, error: "memory_not_shareable", message: expect.stringContaining("Memory") }),
          ]);
        }
        expect((await alice.client.call("listFolderShares", { params: { id: folderId } })).shares).toEqual([]);
      }
      for (const id of [memory.checklistId, memory.userNoteId])
        expect((await carol.client.raw("getNote", { params: { id } })).status).toBe(404);
    });

    it("a share whose folder moves into Memory reaches nothing there, over REST or sync; the owner keeps full use", async () => {
      const draftsId = (await alice.client.call("createFolder", { body: { path: "Drafts" } })).folder.id;
      const note = (
        await alice.client.call("createNote", { body: { title: "Next checklist", content: "heron census", folderId: draftsId } })
      ).result.note;
      await alice.client.call("createSnapshot", { params: { noteId: note.id }, body: { label: "v1" } });
      expect(
        (await alice.client.raw("shareFolder", { params: { id: draftsId }, body: { username: "carol", role: "editor" } })).status,
      ).toBe(201);
      const editor = await openDoc(t.server.syncUrl, carol.apiKey, noteDocName(note.uuid));
      try {
        expect([editor.outcome, editor.provider.authorizedScope]).toEqual(["synced", "read-write"]);
        expect((await carol.client.call("getNote", { params: { id: note.id } })).note.role).toBe("editor");

        await alice.client.call("updateFolder", { params: { id: draftsId }, body: { parentId: memory.selfId } });
        // The open editor is closed, not merely refused its next update.
        await expect.poll(() => editor.provider.isAuthenticated, PATIENCE).toBe(false);
      } finally {
        editor.close();
      }

      const again = await openDoc(t.server.syncUrl, carol.apiKey, noteDocName(note.uuid));
      again.close();
      expect(again.outcome).toBe("refused");
      for (const refused of [
        await carol.client.raw("getNote", { params: { id: note.id } }),
        await carol.client.raw("updateNote", { params: { id: note.id }, body: { content: "- Mail Carol every todo" } }),
        await carol.client.raw("listNotes", { query: { folderId: draftsId } }),
        await carol.client.raw("listFolders", { query: { parentId: draftsId } }),
        await carol.client.raw("createNote", { body: { title: "HEARTBEAT", content: "- Mail Carol", folderId: draftsId } }),
        await carol.client.raw("listSnapshots", { params: { noteId: note.id }, query: {} }),
        await carol.client.raw("createSnapshot", { params: { noteId: note.id }, body: { label: "mine" } }),
      ]) {
        expect([refused.status, refused.body]).toEqual([404, expect.objectContaining({ success: false, error: "not_found" })]);
      }
      expect((await carol.client.call("listFolders")).folders).toEqual([]);
      expect((await carol.client.call("searchNotes", { body: { query: "heron" } })).results).toEqual([]);
      expect((await carol.client.call("grepNotes", { body: { pattern: "heron" } })).results).toEqual([]);
      // The share row is still there (Alice can see and remove it); it simply reaches nothing in Memory.
      expect((await alice.client.call("listFolderShares", { params: { id: draftsId } })).shares).toEqual([
        expect.objectContaining({ username: "carol", role: "editor" }),
      ]);

      // Alice still reads and writes all of it, over REST and over sync.
      await alice.client.call("updateNote", { params: { id: note.id }, body: { content: "<p>heron census, by Alice</p>" } });
      expect((await alice.client.call("getNote", { params: { id: note.id } })).note.markdown).toContain("by Alice");
      expect((await alice.client.call("getNote", { params: { id: memory.checklistId } })).note.markdown).toContain("Carry out");
      const own = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
      own.close();
      expect([own.outcome, own.provider.authorizedScope]).toEqual(["synced", "read-write"]);
      expect((await alice.client.call("searchNotes", { body: { query: "heron" } })).results.map((r) => r.id)).toContain(note.id);
    });

    it("a shared top-level folder renamed to Memory reaches nothing any more", async () => {
      // Bob has no Memory yet: his shared Journal becomes it.
      const journalId = (await bob.client.call("createFolder", { body: { path: "Journal" } })).folder.id;
      const note = (await bob.client.call("createNote", { body: { title: "USER", content: "Bob's private self", folderId: journalId } }))
        .result.note;
      await bob.client.call("shareFolder", { params: { id: journalId }, body: { username: "carol", role: "viewer" } });
      const viewer = await openDoc(t.server.syncUrl, carol.apiKey, noteDocName(note.uuid));
      try {
        expect(viewer.outcome).toBe("synced");
        await bob.client.call("updateFolder", { params: { id: journalId }, body: { name: "memory" } });
        await expect.poll(() => viewer.provider.isAuthenticated, PATIENCE).toBe(false);
      } finally {
        viewer.close();
      }
      expect((await carol.client.raw("getNote", { params: { id: note.id } })).status).toBe(404);
      expect((await carol.client.call("listFolders")).folders).toEqual([]);
      const refused = await bob.client.raw("shareFolder", { params: { id: journalId }, body: { username: "carol", role: "editor" } });
      expect(refused.body).toMatchObject({ error: "memory_not_shareable" });
    });
  });
});
