import { randomUUID } from "node:crypto";
import { ALL_SCOPES, NOTES_MAP, noteDocName, putFolder, putNote, textToJson, workspaceDocName, writeNoteBody } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as Y from "yjs";
import { createApiKey } from "../src/auth/api-keys";
import { ServerConfigSchema } from "../src/config";
import { startServer } from "../src/server";
import { DocumentStore } from "../src/sync/document-store";
import { generalFolderUuid } from "../src/workspace/folders/folders-service";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc, type SyncedDoc } from "./sync-client";

/** Long enough for a loaded machine; nothing here measures time. */
const PATIENCE = { timeout: 20_000, interval: 100 };

/** Waits until the server has answered every change the client sent (applied or refused). */
async function settled(synced: SyncedDoc): Promise<void> {
  await expect.poll(() => synced.provider.unsyncedChanges, PATIENCE).toBe(0);
}

/**
 * Issue #10, points 1–4 and 13: what a client writes over sync can neither take what is another
 * user's, nor wedge anyone's views; access is re-checked while sockets stay open; views follow
 * what is stored, also across a crash.
 */
describe.each(storages("sync security"))("sync security (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  /** Changes a user's document over a real socket, as their client would, and waits for the server to take it. */
  async function writeOverSync(user: TestUser, name: string, change: (doc: Y.Doc) => void): Promise<void> {
    const synced = await openDoc(t.server.syncUrl, user.apiKey, name);
    try {
      expect(synced.outcome).toBe("synced");
      synced.doc.transact(() => change(synced.doc));
      await settled(synced);
    } finally {
      synced.close();
    }
    // A REST write to the same workspace is stored and reflected in the views before it answers: a barrier.
    if (name === workspaceDocName(user.userId)) expect((await user.client.raw("init")).status).toBeLessThan(300);
  }

  async function rootNoteUuids(user: TestUser): Promise<string[]> {
    return (await user.client.call("listNotes", { query: {} })).notes.map((n) => n.uuid);
  }

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
  });
  afterAll(() => t.stop());

  it("1: listing another user's note uuid in one's own workspace grants nothing, before or after the owner deletes it", async () => {
    const folderId = (await alice.client.call("createFolder", { body: { path: "Takeover" } })).folder.id;
    const created = (await alice.client.call("createNote", { body: { title: "Secret plans", content: "the eagle lands", folderId } }))
      .result.note;
    await alice.client.call("createSnapshot", { params: { noteId: created.id }, body: { label: "v1" } });
    await alice.client.call("shareFolder", { params: { id: folderId }, body: { username: "bob", role: "viewer" } });
    const { uuid } = (await bob.client.call("getNote", { params: { id: created.id } })).note;

    // Bob copies the uuid into his own workspace: he is still only a viewer, and it is not his note.
    const now = new Date().toISOString();
    await writeOverSync(bob, workspaceDocName(bob.userId), (doc) =>
      putNote(doc, uuid, { title: "Mine now", folder: null, createdAt: now }),
    );
    const asViewer = await openDoc(t.server.syncUrl, bob.apiKey, noteDocName(uuid));
    asViewer.close();
    expect(asViewer.outcome).toBe("synced");
    expect(asViewer.provider.authorizedScope).toBe("readonly");
    expect(await rootNoteUuids(bob)).not.toContain(uuid);

    // Once the share is gone, nothing is left.
    await alice.client.call("unshareFolder", { params: { id: folderId, username: "bob" } });
    const unshared = await openDoc(t.server.syncUrl, bob.apiKey, noteDocName(uuid));
    unshared.close();
    expect(unshared.outcome).toBe("refused");

    // Alice deletes the note; Bob's next workspace write does not make him its owner.
    await writeOverSync(alice, workspaceDocName(alice.userId), (doc) => doc.getMap(NOTES_MAP).delete(uuid));
    await writeOverSync(bob, workspaceDocName(bob.userId), (doc) => putNote(doc, uuid, { title: "Mine at last", updatedAt: now }));
    expect(await rootNoteUuids(bob)).not.toContain(uuid);
    const afterDelete = await openDoc(t.server.syncUrl, bob.apiKey, noteDocName(uuid));
    afterDelete.close();
    expect(afterDelete.outcome).toBe("refused");
    const bobsNotes = (await bob.client.call("searchNotes", { body: { query: "eagle" } })).results;
    expect(bobsNotes).toEqual([]);

    // The note is still Alice's: put back in her workspace, it is hers again, with its snapshots.
    await writeOverSync(alice, workspaceDocName(alice.userId), (doc) =>
      putNote(doc, uuid, { title: "Secret plans", folder: null, createdAt: now }),
    );
    const restored = (await alice.client.call("listNotes", { query: {} })).notes.find((n) => n.uuid === uuid);
    expect(restored).toBeDefined();
    const snapshots = await alice.client.call("listSnapshots", { params: { noteId: restored?.id as number }, query: {} });
    expect(snapshots.snapshots.map((s) => s.label)).toEqual(["v1"]);
  });

  it("2: revoking a key in another process closes the sync connections opened with it", async () => {
    const key = await createApiKey(t.server.context.db, { userId: alice.userId, scopes: ALL_SCOPES });
    const workspace = await openDoc(t.server.syncUrl, key.apiKey, workspaceDocName(alice.userId));
    try {
      expect(workspace.outcome).toBe("synced");
      const revoked = await t.cli(["keys", "revoke", key.keyId]);
      expect(revoked.code).toBe(0);
      await expect.poll(() => workspace.provider.isAuthenticated, PATIENCE).toBe(false);
    } finally {
      workspace.close();
    }
    const again = await openDoc(t.server.syncUrl, key.apiKey, workspaceDocName(alice.userId));
    again.close();
    expect(again.outcome).toBe("refused");
  });

  it("2: lowering a share to viewer makes an open editor read-only; unsharing closes it", async () => {
    const carol = await t.addUser("carol");
    const folderId = (await alice.client.call("createFolder", { body: { path: "Revocable" } })).folder.id;
    const created = (await alice.client.call("createNote", { body: { title: "Draft", content: "first words", folderId } })).result.note;
    await alice.client.call("shareFolder", { params: { id: folderId }, body: { username: "carol", role: "editor" } });
    const editor = await openDoc(t.server.syncUrl, carol.apiKey, noteDocName(created.uuid));
    const observer = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(created.uuid));
    try {
      expect(editor.outcome).toBe("synced");
      expect(editor.provider.authorizedScope).toBe("read-write");

      await alice.client.call("shareFolder", { params: { id: folderId }, body: { username: "carol", role: "viewer" } });
      editor.doc.transact(() => writeNoteBody(editor.doc, textToJson("vandalised after the downgrade")));
      // The server handles a connection's messages in order: once Alice sees Carol's awareness, sent
      // after the edit, the server has dealt with the edit.
      editor.provider.setAwarenessField("user", { name: "carol" });
      await expect
        .poll(() => [...(observer.provider.awareness?.getStates().values() ?? [])].some((s) => s.user?.name === "carol"), PATIENCE)
        .toBe(true);
      expect((await alice.client.call("getNote", { params: { id: created.id } })).note.markdown).not.toContain("vandalised");

      await alice.client.call("unshareFolder", { params: { id: folderId, username: "carol" } });
      await expect.poll(() => editor.provider.isAuthenticated, PATIENCE).toBe(false);
    } finally {
      editor.close();
      observer.close();
    }
  });

  it("2: unsharing through one server instance closes the grantee's connection on another instance", async () => {
    const dave = await t.addUser("dave");
    const folderId = (await alice.client.call("createFolder", { body: { path: "Across instances" } })).folder.id;
    const created = (await alice.client.call("createNote", { body: { title: "Plan", content: "shared", folderId } })).result.note;
    await alice.client.call("shareFolder", { params: { id: folderId }, body: { username: "dave", role: "editor" } });
    const other = await startServer(
      ServerConfigSchema.parse({ port: 0, dataDir: t.dataDir, databaseUrl: t.databaseUrl, logLevel: "silent" }),
    );
    try {
      const editor = await openDoc(other.syncUrl, dave.apiKey, noteDocName(created.uuid));
      try {
        expect(editor.outcome).toBe("synced");
        await alice.client.call("unshareFolder", { params: { id: folderId, username: "dave" } });
        await expect.poll(() => editor.provider.isAuthenticated, PATIENCE).toBe(false);
      } finally {
        editor.close();
      }
    } finally {
      await other.close();
    }
  });

  it("3: folder uuids written into one workspace never collide with another user's, such as a future user's General", async () => {
    const mallory = await t.addUser("mallory");
    const now = new Date().toISOString();
    await writeOverSync(mallory, workspaceDocName(mallory.userId), (doc) => {
      for (let next = 1; next <= 3; next++) {
        putFolder(doc, generalFolderUuid(mallory.userId + next), { name: `Trap ${next}`, parent: null, icon: null, createdAt: now });
      }
    });
    const victim = await t.addUser("victim");
    expect(victim.userId).toBeGreaterThan(mallory.userId);
    expect((await victim.client.raw("init")).status).toBeLessThan(300);
    expect((await victim.client.raw("createFolder", { body: { path: "Work" } })).status).toBe(201);
    const names = (await victim.client.call("listFolders")).folders.map((f) => f.name).sort();
    expect(names).toEqual(["General", "Work"]);
    expect((await mallory.client.call("listFolders")).folders.map((f) => f.name)).toContain("Trap 1");
  });

  it("4: sibling folders with the same name, from REST or from offline clients, leave the workspace writable", async () => {
    const grace = await t.addUser("grace");
    await grace.client.call("createFolder", { body: { path: "Projects/X" } });
    await grace.client.call("createFolder", { body: { path: "Projects/Old/X" } });
    const old = (await grace.client.call("listFolders")).folders.find((f) => f.name === "Old");
    expect((await grace.client.raw("deleteFolder", { params: { id: old?.id as number } })).status).toBe(200);
    expect((await grace.client.raw("createFolder", { body: { path: "Later" } })).status).toBe(201);

    // Two clients that were offline each created "Inbox".
    const now = new Date().toISOString();
    const first = await openDoc(t.server.syncUrl, grace.apiKey, workspaceDocName(grace.userId));
    const second = await openDoc(t.server.syncUrl, grace.apiKey, workspaceDocName(grace.userId));
    try {
      first.doc.transact(() => putFolder(first.doc, randomUUID(), { name: "Inbox", parent: null, icon: null, createdAt: now }));
      second.doc.transact(() => putFolder(second.doc, randomUUID(), { name: "inbox", parent: null, icon: null, createdAt: now }));
      await settled(first);
      await settled(second);
    } finally {
      first.close();
      second.close();
    }
    expect((await grace.client.raw("createFolder", { body: { path: "After" } })).status).toBe(201);
    const names = (await grace.client.call("listFolders")).folders.map((f) => f.name.toLowerCase());
    expect(names.filter((n) => n === "x")).toHaveLength(2);
    expect(names.filter((n) => n === "inbox")).toHaveLength(2);
    const rebuilt = await t.cli(["views", "rebuild"]);
    expect(rebuilt.code).toBe(0);
    expect((await grace.client.raw("createFolder", { body: { path: "After the rebuild" } })).status).toBe(201);
  });

  it("13: a start recomputes the views of documents stored after their views were last written (a crash between the two)", async () => {
    const heidi = await t.addUser("heidi");
    expect((await heidi.client.raw("init")).status).toBeLessThan(300);
    // What a kill -9 right after storing a document leaves: the document newer than its views.
    const store = new DocumentStore(t.server.context.db);
    const name = workspaceDocName(heidi.userId);
    const doc = await store.loadDoc(name);
    const uuid = randomUUID();
    const now = new Date().toISOString();
    doc.transact(() => putNote(doc, uuid, { title: "Stored before the crash", folder: null, createdAt: now }));
    await store.save(name, doc);
    expect(await rootNoteUuids(heidi)).not.toContain(uuid);
    await t.restart();
    expect(await rootNoteUuids(heidi)).toContain(uuid);
  });
});
