import { jsonToText, noteDocName, putNote, readNoteBody, workspaceDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

type Pulled = { documents: { name: string; update: string; stateVector: string }[]; notServed: string[] };
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const bytes = (text: string) => new Uint8Array(Buffer.from(text, "base64"));
const bodyText = (doc: Y.Doc) => jsonToText(readNoteBody(doc)).trim();

describe.each(storages("sync pull"))("pulling many note documents at once on %s", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const notes: { id: number; uuid: string }[] = [];
  let bobsNote: { uuid: string };
  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    for (const title of ["one", "two", "three"]) {
      notes.push((await alice.client.call("createNote", { body: { title, content: `${title} body` } })).result.note);
    }
    bobsNote = (await bob.client.call("createNote", { body: { title: "bob's", content: "not alice's" } })).result.note;
  });
  afterAll(() => t.stop());

  const pull = async (user: TestUser, documents: { name: string; stateVector?: string }[]): Promise<Pulled> =>
    (await user.client.call("pullDocuments", { body: { documents } })) as unknown as Pulled;
  const raw = (user: TestUser, body: unknown) =>
    t.fetch("/api/v1/sync/pull", {
      method: "POST",
      headers: { authorization: `Bearer ${user.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("answers what the caller lacks of each of their notes, and the server's state vector", async () => {
    const names = notes.map((note) => noteDocName(note.uuid));
    const answer = await pull(
      alice,
      names.map((name) => ({ name })),
    );
    expect(answer.notServed).toEqual([]);
    expect(answer.documents.map((document) => document.name)).toEqual(names);
    const copies = answer.documents.map((document) => {
      const doc = new Y.Doc();
      Y.applyUpdate(doc, bytes(document.update));
      expect(Y.encodeStateVector(doc)).toEqual(bytes(document.stateVector));
      return doc;
    });
    expect(copies.map(bodyText)).toEqual(["one body", "two body", "three body"]);

    // With the server's own state vector there is nothing left to send.
    const first = answer.documents[0];
    if (!first) throw new Error("three notes were served");
    const again = await pull(alice, [{ name: first.name, stateVector: first.stateVector }]);
    const nothing = new Y.Doc();
    Y.applyUpdate(nothing, bytes(again.documents[0]?.update ?? ""));
    expect(nothing.store.clients.size).toBe(0);
  });

  it("serves the live copy of a document open over sync, ahead of storage", async () => {
    const note = notes[1];
    if (!note) throw new Error("three notes were created");
    const name = noteDocName(note.uuid);
    const editor = await openDoc(t.server.syncUrl, alice.apiKey, name);
    try {
      expect(editor.outcome).toBe("synced");
      const { stateVector } = (await pull(alice, [{ name }])).documents[0] ?? {};
      editor.doc.getMap("scratch").set("typed", "just now");
      // The edit reaches the server's live copy well before its debounced store.
      await expect.poll(async () => (await pull(alice, [{ name }])).documents[0]?.stateVector, { timeout: 5_000 }).not.toBe(stateVector);
      const copy = new Y.Doc();
      Y.applyUpdate(copy, bytes((await pull(alice, [{ name }])).documents[0]?.update ?? ""));
      expect(copy.getMap("scratch").get("typed")).toBe("just now");
    } finally {
      editor.close();
    }
  });

  it("does not serve another user's note, the workspace, a name that is no document, or a repeat", async () => {
    const mine = noteDocName(notes[0]?.uuid ?? "");
    const answer = await pull(alice, [
      { name: noteDocName(bobsNote.uuid) },
      { name: workspaceDocName(alice.userId) },
      { name: "note:not-a-uuid" },
      { name: mine },
      { name: mine },
    ]);
    expect(answer.documents.map((document) => document.name)).toEqual([mine]);
    expect(answer.notServed.sort()).toEqual([noteDocName(bobsNote.uuid), workspaceDocName(alice.userId), "note:not-a-uuid", mine].sort());
    // Bob, asking for Alice's note, learns nothing about it.
    expect((await pull(bob, [{ name: mine }])).documents).toEqual([]);
  });

  it("serves a note the caller owns but the server never stored as empty", async () => {
    // Listed in the workspace (so owned), never written over sync.
    const uuid = crypto.randomUUID();
    const workspace = await openDoc(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    try {
      putNote(workspace.doc, uuid, { title: "listed only" });
      const name = noteDocName(uuid);
      await expect.poll(async () => (await pull(alice, [{ name }])).documents.length, { timeout: 10_000 }).toBe(1);
      const served = (await pull(alice, [{ name }])).documents[0];
      expect(bytes(served?.stateVector ?? "x")).toEqual(Y.encodeStateVector(new Y.Doc()));
    } finally {
      workspace.close();
    }
  });

  it("refuses malformed requests with 400 and a key without notes:read with 403", async () => {
    const name = noteDocName(notes[0]?.uuid ?? "");
    expect((await raw(alice, { documents: [] })).status).toBe(400);
    expect((await raw(alice, { documents: Array.from({ length: 501 }, () => ({ name })) })).status).toBe(400);
    expect((await raw(alice, { documents: [{ name, stateVector: "not base64!" }] })).status).toBe(400);
    const truncated = await raw(alice, { documents: [{ name, stateVector: base64(new Uint8Array([5, 200])) }] });
    expect(truncated.status).toBe(400);
    expect(((await truncated.json()) as { error: string }).error).toBe("invalid_state_vector");
    expect((await raw(alice, { documents: [{ name, stateVector: "A".repeat(9_000) }] })).status).toBe(400);
    const todosOnly = await t.addUser(`todos-only-${storage}`, ["os.todos:read"]);
    expect((await raw(todosOnly, { documents: [{ name }] })).status).toBe(403);
  });
});
