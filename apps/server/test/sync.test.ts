import { randomUUID } from "node:crypto";
import { noteDocName, putNote, readNotes, todosDocName, workspaceDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

const open = openDoc;

describe("sync hub at /sync", () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
  });
  afterAll(() => t.stop());

  it("refuses a connection whose token is not a credential", async () => {
    const result = await open(t.server.syncUrl, "svc_sk_not-a-real-key", workspaceDocName(alice.userId));
    result.close();
    expect(result.outcome).toBe("refused");
  });

  it("opens a user's own workspace and refuses another user's", async () => {
    const own = await open(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    own.close();
    expect(own.outcome).toBe("synced");
    const other = await open(t.server.syncUrl, bob.apiKey, workspaceDocName(alice.userId));
    other.close();
    expect(other.outcome).toBe("refused");
  });

  it.each(["workspace:abc", "note:not-a-uuid", "todos:1:2", "anything", ""])("refuses the malformed document name %j", async (name) => {
    const result = await open(t.server.syncUrl, alice.apiKey, name);
    result.close();
    expect(result.outcome).toBe("refused");
  });

  it("syncs only for user keys with the area's scopes: a device token or a key without them is refused", async () => {
    const registered = await fetch(`${t.server.apiUrl}/local-agent/endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ runtime: "codex", deviceId: "sync-test-device" }),
    });
    const { deviceToken } = (await registered.json()) as { deviceToken: string };
    for (const name of [workspaceDocName(alice.userId), todosDocName(alice.userId)]) {
      const asDevice = await open(t.server.syncUrl, deviceToken, name);
      asDevice.close();
      expect(asDevice.outcome).toBe("refused");
    }
    const todosOnly = await t.addUser("todos-only", ["os.todos:read", "os.todos:write"]);
    const notesRefused = await open(t.server.syncUrl, todosOnly.apiKey, workspaceDocName(todosOnly.userId));
    notesRefused.close();
    expect(notesRefused.outcome).toBe("refused");
    const todosOpened = await open(t.server.syncUrl, todosOnly.apiKey, todosDocName(todosOnly.userId));
    todosOpened.close();
    expect(todosOpened.outcome).toBe("synced");
  });

  it("opens a note listed in the user's workspace, and refuses it to others", async () => {
    const uuid = randomUUID();
    const workspace = await open(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    workspace.doc.transact(() => putNote(workspace.doc, uuid, { title: "Offline note", createdAt: new Date().toISOString() }));
    await expect.poll(async () => readNotes(await t.server.context.sync.getDoc(workspaceDocName(alice.userId))).has(uuid)).toBe(true);
    workspace.close();

    const note = await open(t.server.syncUrl, alice.apiKey, noteDocName(uuid));
    note.close();
    expect(note.outcome).toBe("synced");
    const stranger = await open(t.server.syncUrl, bob.apiKey, noteDocName(uuid));
    stranger.close();
    expect(stranger.outcome).toBe("refused");
    const unknown = await open(t.server.syncUrl, alice.apiKey, noteDocName(randomUUID()));
    unknown.close();
    expect(unknown.outcome).toBe("refused");
  });

  it("keeps documents across a restart", async () => {
    const first = await open(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    const uuid = randomUUID();
    first.doc.transact(() => putNote(first.doc, uuid, { title: "Survives restarts" }));
    // Wait until the server holds the edit, then restart while the client is still connected:
    // shutdown must store it.
    await expect.poll(async () => readNotes(await t.server.context.sync.getDoc(workspaceDocName(alice.userId))).has(uuid)).toBe(true);
    await t.restart();
    first.close();
    const second = await open(t.server.syncUrl, alice.apiKey, workspaceDocName(alice.userId));
    second.close();
    expect([...readNotes(second.doc).values()].map((n) => n.title)).toContain("Survives restarts");
  });

  it("answers upgrades on other paths with 404 and keeps serving", async () => {
    const socket = new WebSocket(`${t.server.url.replace("http", "ws")}/elsewhere`);
    const status = await new Promise<number | undefined>((resolve) => {
      socket.on("unexpected-response", (_request, response) => resolve(response.statusCode));
      socket.on("error", () => resolve(undefined));
    });
    expect(status).toBe(404);
    expect((await t.fetch("/healthz")).status).toBe(200);
  });
});
