import { rm } from "node:fs/promises";
import { putFolder, putNote, trashNote } from "@tandem/core";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HubClient, signInAs, startTestHost, tempDir, waitFor } from "../../../test/host-harness";
import { decodeWorkspaceOutline, encodeWorkspaceOutline, type WorkspaceOutline } from "../../shared/workspace-outline";
import type { Host } from "../host";

const now = () => new Date().toISOString();
const decoded = (text: string | null): WorkspaceOutline | null => (text === null ? null : decodeWorkspaceOutline(text));

describe("the workspace outline (the notes view's first view)", () => {
  let ts: TestServer;
  let ada: TestUser;
  let grace: TestUser;
  let dataDir: string;
  let host: Host | undefined;
  const hubs: HubClient[] = [];

  beforeAll(async () => {
    ts = await startTestServer();
    ada = await ts.addUser("ada-outline");
    grace = await ts.addUser("grace-outline");
  });
  afterEach(async () => {
    for (const hub of hubs.splice(0)) hub.close();
    await host?.close();
    host = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });
  afterAll(() => ts?.stop());

  it("is saved from the workspace document and read at the next start before that document is loaded", async () => {
    dataDir = await tempDir("tandem-desktop-outline-");
    host = await startTestHost(dataDir);
    // Signed out: none (the page asks before it knows who is signed in).
    expect(await host.api.getWorkspaceOutline()).toBeNull();
    await signInAs(host, ts, ada);
    expect(await host.api.getWorkspaceOutline()).toBeNull();
    const hub = new HubClient(await host.api.getLocalSync());
    hubs.push(hub);
    const workspace = await hub.open((await host.api.getLocalSync()).workspaceDoc);
    const folder = crypto.randomUUID();
    const [kept, trashed] = [crypto.randomUUID(), crypto.randomUUID()];
    workspace.transact(() => {
      putFolder(workspace, folder, { name: "Projects", parent: null, icon: null, createdAt: now(), updatedAt: now(), trashedAt: null });
      putNote(workspace, kept, { title: "Kept", folder, pinned: true, tags: [], createdAt: now(), updatedAt: now() });
      putNote(workspace, trashed, { title: "Binned", folder: null, pinned: false, tags: [], createdAt: now(), updatedAt: now() });
      trashNote(workspace, trashed, now());
    });
    await waitFor("synced", async () => (await host?.api.getStatus())?.sync.state === "synced");
    // Closing writes the outline due (it is otherwise written a few seconds after the workspace is stored).
    await host.close();

    host = await startTestHost(dataDir);
    const outline = decoded(await host.api.getWorkspaceOutline());
    // Read from disk: the host has not loaded the workspace document (replication waits a moment at a cold start).
    expect(host.openDocuments()).toBe(0);
    const notes = outline?.notes ?? new Map();
    expect(notes.get(kept)).toMatchObject({ title: "Kept", folder, pinned: true, trashedAt: null });
    expect(notes.get(trashed)?.trashedAt).not.toBeNull();
    expect(outline?.folders.get(folder)).toMatchObject({ name: "Projects", parent: null });
    expect(outline?.complete).toBe(true);
    // The first screen: the folders and the listed notes (not the Trash's).
    const first = decoded(await host.api.getWorkspaceOutline({ firstScreen: true }));
    expect(first?.complete).toBe(false);
    expect([...(first?.notes.keys() ?? [])]).toEqual([kept]);
    expect(first?.folders.get(folder)).toMatchObject({ name: "Projects" });
  });

  it("belongs to one account: another user signed in on the same machine gets none", async () => {
    dataDir = await tempDir("tandem-desktop-outline-");
    host = await startTestHost(dataDir);
    // A user of this test alone: the first one's workspace holds that test's notes too.
    const lin = await ts.addUser("lin-outline");
    await signInAs(host, ts, lin);
    const hub = new HubClient(await host.api.getLocalSync());
    hubs.push(hub);
    const workspace = await hub.open((await host.api.getLocalSync()).workspaceDoc);
    workspace.transact(() =>
      putNote(workspace, crypto.randomUUID(), {
        title: "Lin's",
        folder: null,
        pinned: false,
        tags: [],
        createdAt: now(),
        updatedAt: now(),
      }),
    );
    await waitFor("synced", async () => (await host?.api.getStatus())?.sync.state === "synced");
    await host.api.signOut();
    await signInAs(host, ts, grace);
    expect(await host.api.getWorkspaceOutline()).toBeNull();
    await host.api.signOut();
    await signInAs(host, ts, lin);
    const outline = decoded(await host.api.getWorkspaceOutline());
    expect([...(outline?.notes.values() ?? [])].map((meta) => meta.title)).toEqual(["Lin's"]);
  });

  it("answers none for an outline of another format, and the page reads none from a damaged one", async () => {
    dataDir = await tempDir("tandem-desktop-outline-");
    host = await startTestHost(dataDir);
    await signInAs(host, ts, ada);
    const key = `workspace.outline:${ts.server.url}#${ada.userId}`;
    await host.context.store.setSetting(key, "{not json");
    expect(await host.api.getWorkspaceOutline()).toBeNull();
    // The object form of the version before (field names in every entry) is not read.
    await host.context.store.setSetting(key, JSON.stringify({ notes: [], folders: [] }));
    expect(await host.api.getWorkspaceOutline()).toBeNull();

    // The current format is passed on unparsed (the page decodes it).
    const good = encodeWorkspaceOutline(new Map(), new Map());
    await host.context.store.setSetting(key, good);
    expect(await host.api.getWorkspaceOutline()).toBe(good);
  });
});
