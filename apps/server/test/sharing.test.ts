import { jsonToText, readNoteBody, writeNoteBody } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

describe("shared folders", () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let folderId: number;
  let noteId: number;

  beforeAll(async () => {
    t = await startTestServer();
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
});
