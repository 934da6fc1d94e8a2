import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { NOTE_FRAGMENT, putNote, readNotes } from "@tandem/core";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { HubClient, startTestHost, tempDir, waitFor } from "../../../test/host-harness";
import type { Host } from "../host";
import { normaliseServerUrl } from "./server-url";

const now = () => new Date().toISOString();

describe("server URLs", () => {
  it("keeps the origin and refuses anything else", () => {
    expect(normaliseServerUrl(" https://tandem.example.com/ ")).toBe("https://tandem.example.com");
    expect(normaliseServerUrl("http://127.0.0.1:8787")).toBe("http://127.0.0.1:8787");
    expect(normaliseServerUrl("HTTPS://Tandem.Example.com:443")).toBe("https://tandem.example.com");
    expect(() => normaliseServerUrl("tandem.example.com")).toThrow(/not a URL/);
    expect(() => normaliseServerUrl("ftp://tandem.example.com")).toThrow(/http:\/\/ or https:\/\//);
    expect(() => normaliseServerUrl("https://me:secret@tandem.example.com")).toThrow(/user name or password/);
    expect(() => normaliseServerUrl("https://tandem.example.com/api/v1")).toThrow(/without a path/);
    expect(() => normaliseServerUrl("https://tandem.example.com/?x=1")).toThrow(/without a path, query/);
  });
});

describe("signing in", () => {
  let ts: TestServer;
  let ada: TestUser;
  let dataDir: string;
  let host: Host | undefined;
  const hubs: HubClient[] = [];

  beforeAll(async () => {
    ts = await startTestServer();
    ada = await ts.addUser("ada");
  });

  afterEach(async () => {
    for (const hub of hubs.splice(0)) hub.close();
    await host?.close();
    host = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  afterAll(async () => {
    await ts?.stop();
  });

  async function freshHost(): Promise<Host> {
    dataDir = await tempDir("tandem-desktop-session-");
    host = await startTestHost(dataDir);
    return host;
  }

  async function settingsDump(target: Host): Promise<string> {
    const rows = await target.context.store.db.selectFrom("settings").selectAll().execute();
    return JSON.stringify(rows);
  }

  it("starts signed out, and sync says so", async () => {
    const host = await freshHost();
    expect(await host.api.getSession()).toEqual({ state: "signed_out", serverUrl: null });
    expect((await host.api.getStatus()).sync.state).toBe("signed_out");
    await expect(host.api.getLocalSync()).rejects.toThrow("Sign in first");
  });

  it("signs in with an API key, keeping the key in the secret store and never in the settings", async () => {
    const signedIn = await freshHost();
    const session = await signedIn.api.signInWithApiKey({ serverUrl: `${ts.server.url}/`, apiKey: ada.apiKey });
    expect(session).toEqual({ state: "signed_in", serverUrl: ts.server.url, userId: ada.userId, username: "ada", name: null });
    expect(await signedIn.api.getSession()).toEqual(session);
    expect(signedIn.context.session.credentials()).toEqual({ serverUrl: ts.server.url, apiKey: ada.apiKey, userId: ada.userId });
    const identity = await signedIn.context.session.client()?.call("identity");
    expect(identity?.username).toBe("ada");

    expect(await settingsDump(signedIn)).not.toContain(ada.apiKey);
    const secretsFile = path.join(dataDir, "secrets.json");
    expect(JSON.parse(await readFile(secretsFile, "utf8"))).toEqual({ apiKey: ada.apiKey });
    // The database file holds documents and settings only: the key is nowhere in it.
    await signedIn.close();
    host = undefined;
    expect((await readFile(path.join(dataDir, "tandem.sqlite"))).includes(Buffer.from(ada.apiKey))).toBe(false);
  });

  it("refuses bad input, a wrong key, a device token, a key without sync scopes and an unreachable server, clearly", async () => {
    const host = await freshHost();
    const signIn = (input: unknown) => host.api.signInWithApiKey(input as { serverUrl: string; apiKey: string });
    await expect(signIn({ serverUrl: ts.server.url })).rejects.toThrow(/signInWithApiKey: invalid input: apiKey/);
    await expect(signIn("nonsense")).rejects.toThrow(/signInWithApiKey: invalid input/);
    await expect(signIn({ serverUrl: "tandem", apiKey: ada.apiKey })).rejects.toThrow(/not a URL/);
    await expect(signIn({ serverUrl: ts.server.url, apiKey: "svc_sk_not-a-real-key" })).rejects.toThrow(
      "The server refused this API key: it is wrong, revoked or expired",
    );

    const device = await ada.client.call("registerRuntimeEndpoint", { body: { deviceId: "laptop", runtime: "claude-code" } });
    await expect(signIn({ serverUrl: ts.server.url, apiKey: device.deviceToken })).rejects.toThrow(/device token/);

    const reader = await ts.addUser("reader", ["os.notes:read", "os.todos:read"]);
    await expect(signIn({ serverUrl: ts.server.url, apiKey: reader.apiKey })).rejects.toThrow(
      "This API key lacks os.notes:write, os.todos:write, which the desktop needs to sync notes and todos",
    );

    // A port nothing listens on: bind one, then close it.
    const closed = await startTestServer();
    const deadUrl = closed.server.url;
    await closed.stop();
    await expect(signIn({ serverUrl: deadUrl, apiKey: ada.apiKey })).rejects.toThrow(
      `Could not reach the server at ${deadUrl} (ECONNREFUSED)`,
    );

    expect(await host.api.getSession()).toEqual({ state: "signed_out", serverUrl: null });
    expect(await settingsDump(host)).not.toContain("svc_");
  });

  it("restores the saved session at start without the network; replication waits offline", async () => {
    const gone = await startTestServer();
    const grace = await gone.addUser("grace");
    let restarted = await freshHost();
    await restarted.api.signInWithApiKey({ serverUrl: gone.server.url, apiKey: grace.apiKey });
    await waitFor("synced", async () => (await restarted.api.getStatus()).sync.state === "synced");
    await restarted.close();
    await gone.stop();

    host = restarted = await startTestHost(dataDir);
    expect(await restarted.api.getSession()).toEqual({
      state: "signed_in",
      serverUrl: gone.server.url,
      userId: grace.userId,
      username: "grace",
      name: null,
    });
    expect((await restarted.api.getLocalSync()).userId).toBe(grace.userId);
    await waitFor("offline", async () => (await restarted.api.getStatus()).sync.state === "offline");
  });

  it("signs out keeping the local documents, which come back when the same user signs in again", async () => {
    const host = await freshHost();
    await host.api.signInWithApiKey({ serverUrl: ts.server.url, apiKey: ada.apiKey });
    const sync = await host.api.getLocalSync();
    const first = new HubClient(sync);
    hubs.push(first);
    const workspace = await first.open(sync.workspaceDoc);
    const uuid = crypto.randomUUID();
    workspace.transact(() =>
      putNote(workspace, uuid, { title: "Kept", folder: null, pinned: false, tags: [], createdAt: now(), updatedAt: now() }),
    );
    const note = await first.open(`note:${uuid}`);
    note.getXmlFragment(NOTE_FRAGMENT).insert(0, [new Y.XmlText("typed here")]);
    await waitFor("synced", async () => (await host.api.getStatus()).sync.state === "synced");

    expect(await host.api.signOut()).toEqual({ state: "signed_out", serverUrl: ts.server.url });
    expect((await host.api.getStatus()).sync.state).toBe("signed_out");
    await expect(host.api.getLocalSync()).rejects.toThrow("Sign in first");
    expect(host.context.session.credentials()).toBeNull();
    expect(JSON.parse(await readFile(path.join(dataDir, "secrets.json"), "utf8"))).toEqual({});
    const rows = await host.context.store.db.selectFrom("documents").select(["account", "name"]).execute();
    expect(rows).toContainEqual({ account: `${ts.server.url}#${ada.userId}`, name: `note:${uuid}` });

    // Delete the note on the server meanwhile: the local copy is what the next sign-in shows first.
    await host.api.signInWithApiKey({ serverUrl: ts.server.url, apiKey: ada.apiKey });
    const again = new HubClient(await host.api.getLocalSync());
    hubs.push(again);
    expect(readNotes(await again.open(sync.workspaceDoc)).get(uuid)?.title).toBe("Kept");
  });

  it("signs back in while the server is down when this device knows the account, and only then", async () => {
    const own = await startTestServer();
    try {
      const grace = await own.addUser("grace-offline");
      const host = await freshHost();
      await host.api.signInWithApiKey({ serverUrl: own.server.url, apiKey: grace.apiKey });
      await host.api.signOut();
      const url = own.server.url;
      await own.stop();
      expect(await host.api.signInWithApiKey({ serverUrl: url, apiKey: grace.apiKey })).toMatchObject({
        state: "signed_in",
        userId: grace.userId,
        username: "grace-offline",
      });
      expect((await host.api.getLocalSync()).userId).toBe(grace.userId);
      await host.api.signOut();
      // A key this device never used: nobody can tell whose it is.
      await expect(host.api.signInWithApiKey({ serverUrl: url, apiKey: `${grace.apiKey}x` })).rejects.toThrow(/Could not reach/);
      expect(await settingsDump(host)).not.toContain(grace.apiKey);
    } finally {
      await own.stop().catch(() => {});
    }
  });

  it("keeps each account's documents apart: another user never sees, nor uploads, the first one's", async () => {
    const host = await freshHost();
    const grace = await ts.addUser("grace-2");
    await host.api.signInWithApiKey({ serverUrl: ts.server.url, apiKey: ada.apiKey });
    const adaSync = await host.api.getLocalSync();
    const adaHub = new HubClient(adaSync);
    hubs.push(adaHub);
    const secret = crypto.randomUUID();
    // A note body that exists only on this machine (not listed in any workspace).
    const body = await adaHub.open(`note:${secret}`);
    body.getText("probe").insert(0, "ada's private text");
    await waitFor("stored", () => adaHub.settled());
    await host.api.signOut();

    await host.api.signInWithApiKey({ serverUrl: ts.server.url, apiKey: grace.apiKey });
    const graceSync = await host.api.getLocalSync();
    expect(graceSync.userId).toBe(grace.userId);
    expect(graceSync.token).not.toBe(adaSync.token);
    const graceHub = new HubClient(graceSync);
    hubs.push(graceHub);
    await expect(graceHub.open(adaSync.workspaceDoc)).rejects.toThrow(/refused/);
    // Grace's workspace lists the same uuid: her copy starts empty, and ada's text never leaves.
    const workspace = await graceHub.open(graceSync.workspaceDoc);
    workspace.transact(() =>
      putNote(workspace, secret, { title: "Probe", folder: null, pinned: false, tags: [], createdAt: now(), updatedAt: now() }),
    );
    const graceBody = await graceHub.open(`note:${secret}`);
    expect(graceBody.getText("probe").toString()).toBe("");
    await waitFor("synced", async () => (await host.api.getStatus()).sync.state === "synced");
    const onServer = await ts.server.context.sync.getDoc(`note:${secret}`);
    expect(onServer.getText("probe").toString()).toBe("");
  });

  it("signs in by device code: pending until the owner approves, then with the key the approval issued; a denial ends it", async () => {
    const host = await freshHost();
    await expect(host.api.pollSignInPairing()).rejects.toThrow("No sign-in by code is in progress: start one first");
    await expect(host.api.startSignInPairing({ serverUrl: "nope" })).rejects.toThrow(/not a URL/);

    const denied = await host.api.startSignInPairing({ serverUrl: ts.server.url });
    expect(denied.userCode).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(denied.approvalUrl).toContain("/local-agent/pair");
    expect(await host.api.pollSignInPairing()).toEqual({ status: "pending" });
    await ada.client.call("approveDeviceCode", { body: { userCode: denied.userCode, action: "deny" } });
    expect(await host.api.pollSignInPairing()).toEqual({ status: "denied" });
    await expect(host.api.pollSignInPairing()).rejects.toThrow(/No sign-in by code is in progress/);

    const prompt = await host.api.startSignInPairing({ serverUrl: ts.server.url });
    expect(await host.api.pollSignInPairing()).toEqual({ status: "pending" });
    await ada.client.call("approveDeviceCode", { body: { userCode: prompt.userCode, action: "approve" } });
    // The approval issued an API key for this app: the app signs in with it, as with a typed key.
    expect(await host.api.pollSignInPairing()).toEqual({
      status: "approved",
      session: { state: "signed_in", serverUrl: ts.server.url, userId: ada.userId, username: "ada", name: null },
    });
    const apiKey = host.context.session.credentials()?.apiKey;
    expect(apiKey).toMatch(/^svc_sk_/);
    expect(apiKey).not.toBe(ada.apiKey);
    expect(JSON.parse(await readFile(path.join(dataDir, "secrets.json"), "utf8"))).toEqual({ apiKey });
    expect((await host.api.getLocalSync()).userId).toBe(ada.userId);
    await waitFor("synced", async () => (await host.api.getStatus()).sync.state === "synced");
    await expect(host.api.pollSignInPairing()).rejects.toThrow(/No sign-in by code is in progress/);
  });
});
