import { jsonToText, NOTE_FRAGMENT, noteDocName, readNoteBody, todosDocName, workspaceDocName } from "@tandem/core";
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT } from "jose";
import * as encoding from "lib0/encoding";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import { createApiKey, revokeApiKey } from "../src/auth/api-keys";
import { setPassword } from "../src/auth/passwords";
import { loadProviderKeys } from "../src/oauth/provider-keys";
import type { RunningServer } from "../src/server";
import { YJS_AWARENESS_MAX_BYTES, YJS_SUBPROTOCOL } from "../src/sync/yjs-endpoint";
import { call, storages } from "./delegation-fixture";
import {
  POSTGRES_URL,
  REDIS_URL,
  randomRedisPrefix,
  startAnotherInstance,
  startTestServer,
  type TestServer,
  type TestUser,
} from "./harness";
import { authorize, Browser, exchangeCode, pkce, type RegisteredClient, registerClient } from "./oauth-flow";
import { openDoc, type SyncedDoc } from "./sync-client";

const KiB = 1024;
/** The sockets a credential may hold on these servers: a few, so reaching the bound is cheap. */
const SOCKETS_PER_CREDENTIAL = 4;
const PASSWORD = "correct horse battery";

/** An app's tokens through the whole OAuth flow (authorize, sign in, consent, code exchange). */
async function oauthTokens(
  t: TestServer,
  browser: Browser,
  client: RegisteredClient,
  user: TestUser,
  scope: string,
): Promise<{ access: string; refresh: string }> {
  const { verifier, challenge } = pkce();
  const callback = await authorize(t, browser, client, { scope, username: user.username, password: PASSWORD, challenge });
  const tokens = await exchangeCode(t, client, callback.searchParams.get("code") ?? "", verifier);
  if (tokens.status !== 200) throw new Error(`no tokens: ${JSON.stringify(tokens.body)}`);
  return { access: tokens.body.access_token as string, refresh: tokens.body.refresh_token as string };
}
/** Long enough for a loaded machine; nothing here measures time. */
const PATIENCE = { timeout: 20_000, interval: 50 };

interface YjsClient {
  readonly doc: Y.Doc;
  readonly provider: WebsocketProvider;
  /** Resolves once the first sync is through. */
  readonly synced: Promise<void>;
  /** Resolves with the close the server ended the provider with (a code it does not reconnect after). */
  readonly closed: Promise<{ code: number; reason: string }>;
  /** What the server said in y-protocols' "permission denied" messages. */
  readonly denied: string[];
  close(): void;
}

/** A y-websocket `WebsocketProvider` as a third-party client opens one: `ws` as its WebSocket, no BroadcastChannel. */
function openYjs(server: RunningServer, name: string, credential: { token?: string; protocol?: string }): YjsClient {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(server.yjsUrl, name, doc, {
    WebSocketPolyfill: WebSocket as never,
    params: credential.token ? { token: credential.token } : {},
    protocols: credential.protocol ? [YJS_SUBPROTOCOL, credential.protocol] : [],
    disableBc: true,
  });
  const denied: string[] = [];
  // y-websocket logs a refusal and nothing else: listen where it reads the message.
  provider.messageHandlers[2] = (_encoder, decoder) => {
    decoder.pos += 1;
    const length = decoder.arr[decoder.pos++] ?? 0;
    denied.push(new TextDecoder().decode(decoder.arr.subarray(decoder.pos, decoder.pos + length)));
  };
  const synced = new Promise<void>((resolve) => provider.once("sync", () => resolve()));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => provider.once("closed", (event) => resolve(event)));
  return { doc, provider, synced, closed, denied, close: () => provider.destroy() };
}

/** A bare socket to `/yjs/<name>`, for frames no provider sends; resolves once open. */
async function rawSocket(server: RunningServer, name: string, token: string): Promise<{ socket: WebSocket; closed: Promise<number> }> {
  const socket = new WebSocket(`${server.yjsUrl}/${name}?token=${token}`);
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  return { socket, closed };
}

/** An awareness message as y-websocket frames one, carrying `bytes` of state. */
function awarenessMessage(clientId: number, clock: number, bytes = 20): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, 1);
  const update = encoding.createEncoder();
  encoding.writeVarUint(update, 1);
  encoding.writeVarUint(update, clientId);
  encoding.writeVarUint(update, clock);
  encoding.writeVarString(update, JSON.stringify({ user: { name: "x".repeat(bytes) } }));
  encoding.writeVarUint8Array(encoder, encoding.toUint8Array(update));
  return encoding.toUint8Array(encoder);
}

const bodyText = (doc: Y.Doc) => jsonToText(readNoteBody(doc));

function appendParagraph(doc: Y.Doc, text: string): void {
  const paragraph = new Y.XmlElement("paragraph");
  paragraph.insert(0, [new Y.XmlText(text)]);
  doc.getXmlFragment(NOTE_FRAGMENT).push([paragraph]);
}

/** Resolves once the awareness states of `awareness` name `name` as a user (or stop naming it). */
async function seesUser(awareness: { getStates(): Map<number, Record<string, unknown>> }, name: string, present = true) {
  await expect
    .poll(() => [...awareness.getStates().values()].some((s) => (s.user as { name?: string } | undefined)?.name === name), PATIENCE)
    .toBe(present);
}

/** Each client's edit and cursor reach the other: y-websocket's to Hocuspocus's, then back. */
async function seeEachOther(yjs: YjsClient, hocuspocus: SyncedDoc, label: string): Promise<void> {
  appendParagraph(yjs.doc, `typed over y-websocket ${label}`);
  await expect.poll(() => bodyText(hocuspocus.doc), PATIENCE).toContain(`typed over y-websocket ${label}`);
  appendParagraph(hocuspocus.doc, `answered over Hocuspocus ${label}`);
  await expect.poll(() => bodyText(yjs.doc), PATIENCE).toContain(`answered over Hocuspocus ${label}`);
  yjs.provider.awareness.setLocalStateField("user", { name: `y-websocket ${label}` });
  await seesUser(hocuspocus.provider.awareness as never, `y-websocket ${label}`);
  hocuspocus.provider.setAwarenessField("user", { name: `hocuspocus ${label}` });
  await seesUser(yjs.provider.awareness as never, `hocuspocus ${label}`);
}

describe.each(storages("yjs endpoint"))("y-websocket clients on /yjs (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const logs: string[] = [];
  const tokens: string[] = [];

  beforeAll(async () => {
    // Everything the server logs, down to debug, to show that no credential is among it.
    const logger = pino({ level: "debug" }, { write: (line: string) => logs.push(line) });
    // A quota below the document limit: one update can break the quota without being too large a document.
    const limits = { maxDocumentBytes: 64 * KiB, userQuotaBytes: 48 * KiB, yjsSocketsPerCredential: SOCKETS_PER_CREDENTIAL };
    t = await startTestServer({ ...limits, accessLog: "debug" }, storage, logger);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await setPassword(t.server.context.db, alice.userId, PASSWORD);
    tokens.push(alice.apiKey, bob.apiKey);
  });
  afterAll(() => t.stop());

  async function noteOf(user: TestUser, title: string, content: string, folderId?: number) {
    return (await user.client.call("createNote", { body: { title, content, folderId } })).result.note;
  }

  async function storedBody(user: TestUser, id: number): Promise<string> {
    return (await user.client.call("getNote", { params: { id } })).note.markdown;
  }

  it("edits a note live beside a Hocuspocus client, cursors included; REST reads what it wrote", async () => {
    const note = await noteOf(alice, "Shared live", "start");
    const yjs = openYjs(t.server, noteDocName(note.uuid), { token: alice.apiKey });
    const hocuspocus = await openDoc(t.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
    try {
      await yjs.synced;
      expect(bodyText(yjs.doc)).toBe("start");
      await seeEachOther(yjs, hocuspocus, "on one server");
      // Leaving takes the cursor away at once.
      yjs.close();
      await seesUser(hocuspocus.provider.awareness as never, "y-websocket on one server", false);
      await expect.poll(() => storedBody(alice, note.id), PATIENCE).toContain("typed over y-websocket");
    } finally {
      yjs.close();
      hocuspocus.close();
    }
  });

  it("takes the credential as a subprotocol too, for the workspace and todos documents", async () => {
    const note = await noteOf(alice, "Listed", "in the workspace");
    const workspace = openYjs(t.server, workspaceDocName(alice.userId), { protocol: alice.apiKey });
    const todos = openYjs(t.server, todosDocName(alice.userId), { protocol: alice.apiKey });
    try {
      await Promise.all([workspace.synced, todos.synced]);
      expect(workspace.doc.getMap("notes").has(note.uuid)).toBe(true);
      await alice.client.call("createTodo", { body: { title: "Reach y-websocket" } });
      await expect
        .poll(() => [...todos.doc.getMap<Y.Map<unknown>>("todos").values()].map((todo) => todo.get("title")), PATIENCE)
        .toContain("Reach y-websocket");
    } finally {
      workspace.close();
      todos.close();
    }
  });

  it("refuses what /sync refuses, and closes a socket whose key is revoked; nothing is stored", async () => {
    const bobs = await noteOf(bob, "Bob's own", "private");
    const refusals = {
      none: openYjs(t.server, noteDocName(bobs.uuid), {}),
      unknown: openYjs(t.server, noteDocName(bobs.uuid), { token: "svc_sk_not-a-key" }),
      notHers: openYjs(t.server, noteDocName(bobs.uuid), { token: alice.apiKey }),
      badName: openYjs(t.server, "note:NOT-A-UUID", { token: alice.apiKey }),
      othersTodos: openYjs(t.server, todosDocName(bob.userId), { token: alice.apiKey }),
    };
    try {
      // A write on a refused socket must never land.
      refusals.notHers.doc.getXmlFragment(NOTE_FRAGMENT).push([new Y.XmlText("taken over")]);
      expect(await refusals.none.closed).toEqual({ code: 4401, reason: "unauthorized" });
      expect(await refusals.unknown.closed).toEqual({ code: 4401, reason: "unauthorized" });
      expect(await refusals.notHers.closed).toEqual({ code: 4403, reason: "forbidden" });
      expect(refusals.notHers.denied).toEqual(["forbidden"]);
      expect(await refusals.badName.closed).toEqual({ code: 4403, reason: "forbidden" });
      expect(await refusals.othersTodos.closed).toEqual({ code: 4403, reason: "forbidden" });
      // The provider stops: a refusal is final.
      expect(refusals.notHers.provider.shouldConnect).toBe(false);
    } finally {
      for (const client of Object.values(refusals)) client.close();
    }
    expect((await storedBody(bob, bobs.id)).trim()).toBe("private");

    const key = await createApiKey(t.server.context.db, { userId: alice.userId, scopes: ["os.notes:read", "os.notes:write"] });
    tokens.push(key.apiKey);
    const note = await noteOf(alice, "Revocable", "before");
    const open = openYjs(t.server, noteDocName(note.uuid), { token: key.apiKey });
    try {
      await open.synced;
      await revokeApiKey(t.server.context.db, key.keyId);
      expect(await open.closed).toEqual({ code: 4403, reason: "access_revoked" });
    } finally {
      open.close();
    }
    const again = openYjs(t.server, noteDocName(note.uuid), { token: key.apiKey });
    expect(await again.closed).toEqual({ code: 4401, reason: "unauthorized" });
    again.close();
  });

  it("takes an app's OAuth access token as /sync does, with its scopes; revoking the app or its refresh token closes its sockets", async () => {
    const browser = new Browser(t);
    const editorApp = await registerClient(t, "http://127.0.0.1:53682/callback", "Editor app");
    const readerApp = await registerClient(t, "http://127.0.0.1:53683/callback", "Reader app");
    const editor = await oauthTokens(t, browser, editorApp, alice, "offline_access os.notes:read os.notes:write");
    const reader = await oauthTokens(t, browser, readerApp, alice, "offline_access os.notes:read");
    tokens.push(editor.access, editor.refresh, reader.access, reader.refresh);
    const note = await noteOf(alice, "Through an app", "start");
    const yjs = openYjs(t.server, noteDocName(note.uuid), { token: editor.access });
    const hocuspocus = await openDoc(t.server.syncUrl, editor.access, noteDocName(note.uuid));
    const readOnly = openYjs(t.server, noteDocName(note.uuid), { protocol: reader.access });
    const noTodosScope = openYjs(t.server, todosDocName(alice.userId), { token: reader.access });
    try {
      expect(hocuspocus.outcome).toBe("synced");
      await Promise.all([yjs.synced, readOnly.synced]);
      appendParagraph(yjs.doc, "written by an app");
      await expect.poll(() => bodyText(hocuspocus.doc), PATIENCE).toContain("written by an app");
      // Her own note, but the token may only read notes: its changes are refused.
      appendParagraph(readOnly.doc, "not by a reader");
      await expect.poll(() => readOnly.denied, PATIENCE).toContain("read_only");
      expect(await noTodosScope.closed).toEqual({ code: 4403, reason: "forbidden" });

      // Disconnected with a key, as the account page does: both its sockets close, /yjs's and /sync's.
      expect((await call(t, alice.apiKey, "DELETE", `/account/connected-apps/${editorApp.clientId}`)).status).toBe(200);
      expect(await yjs.closed).toEqual({ code: 4403, reason: "access_revoked" });
      await expect.poll(() => hocuspocus.provider.isAuthenticated, PATIENCE).toBe(false);
      // The app revoking its refresh token revokes its grant: its socket closes too.
      const revoked = await t.fetch("/oauth/token/revocation", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: reader.refresh, token_type_hint: "refresh_token", client_id: readerApp.clientId }).toString(),
      });
      expect(revoked.status).toBe(200);
      expect(await readOnly.closed).toEqual({ code: 4403, reason: "access_revoked" });
    } finally {
      for (const client of [yjs, readOnly, noTodosScope]) client.close();
      hocuspocus.close();
    }
    expect(await storedBody(alice, note.id)).toContain("written by an app");
    expect(await storedBody(alice, note.id)).not.toContain("not by a reader");
    const again = openYjs(t.server, noteDocName(note.uuid), { token: editor.access });
    expect(await again.closed).toEqual({ code: 4401, reason: "unauthorized" });
    again.close();
  });

  it("verifies an access token past its expiry for re-checks of open sockets, by its grant; a new socket is refused it", async () => {
    const app = await registerClient(t, "http://127.0.0.1:53685/callback", "Expiring app");
    const { access } = await oauthTokens(t, new Browser(t), app, alice, "os.notes:read");
    // The same token as the server signs it, but expired a minute ago.
    const { signingKey } = await loadProviderKeys(t.server.context.db, t.server.context.secrets);
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ ...decodeJwt(access), iat: now - 900, exp: now - 60 })
      .setProtectedHeader(decodeProtectedHeader(access) as { alg: string })
      .sign(await importJWK(signingKey, "ES256"));
    tokens.push(access, expired);
    const { authenticator } = t.server.context;
    expect(await authenticator.verify(expired)).toBeNull();
    expect((await authenticator.verify(expired, { acceptExpired: true }))?.userId).toBe(alice.userId);
    expect(await authenticator.verify(`${expired.slice(0, -4)}AAAA`, { acceptExpired: true })).toBeNull();
    const late = openYjs(t.server, workspaceDocName(alice.userId), { token: expired });
    expect(await late.closed).toEqual({ code: 4401, reason: "unauthorized" });
    late.close();
    expect((await call(t, alice.apiKey, "DELETE", `/account/connected-apps/${app.clientId}`)).status).toBe(200);
    expect(await authenticator.verify(expired, { acceptExpired: true })).toBeNull();
  });

  it("tells a viewer its changes are refused, stores none of them, and keeps it live", async () => {
    const folderId = (await alice.client.call("createFolder", { body: { path: "For Bob" } })).folder.id;
    const note = await noteOf(alice, "Read me", "original", folderId);
    await alice.client.call("shareFolder", { params: { id: folderId }, body: { username: "bob", role: "viewer" } });
    const viewer = openYjs(t.server, noteDocName(note.uuid), { token: bob.apiKey });
    try {
      await viewer.synced;
      appendParagraph(viewer.doc, "defaced by the viewer");
      await expect.poll(() => viewer.denied, PATIENCE).toContain("read_only");
      await alice.client.call("updateNote", { params: { id: note.id }, body: { content: "<p>edited by the owner</p>" } });
      await expect.poll(() => bodyText(viewer.doc), PATIENCE).toContain("edited by the owner");
      expect(viewer.provider.wsconnected).toBe(true);
    } finally {
      viewer.close();
    }
    expect(await storedBody(alice, note.id)).not.toContain("defaced");
  });

  it("refuses oversized, deeply nested and over-quota updates with final close codes, storing none", { timeout: 60_000 }, async () => {
    const note = await noteOf(alice, "Limits", "small");
    const big = openYjs(t.server, noteDocName(note.uuid), { token: alice.apiKey });
    const deep = openYjs(t.server, noteDocName(note.uuid), { token: alice.apiKey });
    try {
      await Promise.all([big.synced, deep.synced]);
      appendParagraph(big.doc, "x".repeat(80 * KiB));
      expect(await big.closed).toEqual({ code: 4413, reason: "document_too_large" });
      deep.doc.transact(() => {
        let parent: Y.XmlFragment = deep.doc.getXmlFragment(NOTE_FRAGMENT);
        for (let level = 0; level < 1_100; level++) {
          const quote = new Y.XmlElement("blockquote");
          parent.insert(0, [quote]);
          parent = quote;
        }
      });
      expect(await deep.closed).toEqual({ code: 4422, reason: "too_deeply_nested" });
    } finally {
      big.close();
      deep.close();
    }
    expect((await storedBody(alice, note.id)).trim()).toBe("small");

    // Within the document limit, past the owner's quota.
    const carol = await t.addUser("carol");
    const carols = await noteOf(carol, "Quota", "small");
    const filling = openYjs(t.server, noteDocName(carols.uuid), { token: carol.apiKey });
    try {
      await filling.synced;
      appendParagraph(filling.doc, "z".repeat(50 * KiB));
      expect(await filling.closed).toEqual({ code: 4413, reason: "storage_quota_exceeded" });
    } finally {
      filling.close();
    }
    expect((await storedBody(carol, carols.id)).trim()).toBe("small");
  });

  it("closes a socket flooding awareness or sending a huge state, one past the sockets a key may hold, and a frame y-websocket never sends", {
    timeout: 60_000,
  }, async () => {
    const name = workspaceDocName(alice.userId);
    const watcher = openYjs(t.server, name, { token: alice.apiKey });
    await watcher.synced;
    try {
      const flood = await rawSocket(t.server, name, alice.apiKey);
      for (let clock = 1; clock <= 2_000 && flood.socket.readyState === WebSocket.OPEN; clock++) {
        flood.socket.send(awarenessMessage(424242, clock));
      }
      expect(await flood.closed).toBe(4529);

      const huge = await rawSocket(t.server, name, alice.apiKey);
      huge.socket.send(awarenessMessage(434343, 1, YJS_AWARENESS_MAX_BYTES));
      expect(await huge.closed).toBe(4413);

      const garbage = await rawSocket(t.server, name, alice.apiKey);
      garbage.socket.send(Uint8Array.of(7, 0));
      expect(await garbage.closed).toBe(4400);

      // The watcher holds one socket; the rest up to the bound are opened here.
      const held = await Promise.all(Array.from({ length: SOCKETS_PER_CREDENTIAL - 1 }, () => rawSocket(t.server, name, alice.apiKey)));
      const past = await rawSocket(t.server, name, alice.apiKey);
      expect(await past.closed).toBe(4529);
      const one = held.pop();
      one?.socket.close();
      await one?.closed;
      const again = await rawSocket(t.server, name, alice.apiKey);
      for (const socket of [...held, again]) socket.socket.close();
      await Promise.all([...held, again].map((socket) => socket.closed));

      // Unharmed: the watcher is still live, and saw none of the flood's states linger.
      await alice.client.call("createNote", { body: { title: "After the flood", content: "fine" } });
      await expect
        .poll(() => [...watcher.doc.getMap<Y.Map<unknown>>("notes").values()].some((n) => n.get("title") === "After the flood"), PATIENCE)
        .toBe(true);
      expect(watcher.provider.wsconnected).toBe(true);
    } finally {
      watcher.close();
    }
  });

  it("logs no credential, neither from the query nor from the subprotocol", () => {
    expect(logs.length).toBeGreaterThan(0);
    const all = logs.join("\n");
    for (const token of tokens) expect(all).not.toContain(token);
    expect(all).toContain("yjs socket closed by the server");
  });
});

describe.skipIf(!POSTGRES_URL)("y-websocket across instances (PostgreSQL + Redis)", () => {
  let one: TestServer;
  let two: RunningServer;
  let alice: TestUser;

  beforeAll(async () => {
    one = await startTestServer({ redisUrl: REDIS_URL, redisPrefix: randomRedisPrefix(), yjsSocketsPerCredential: 2 }, "postgres");
    two = await startAnotherInstance(one);
    alice = await one.addUser("alice");
    await setPassword(one.server.context.db, alice.userId, PASSWORD);
  });
  afterAll(async () => {
    await two?.close();
    await one?.stop();
  });

  it("a y-websocket client on one instance and a Hocuspocus client on the other edit one note live; revoking closes it", async () => {
    const key = await createApiKey(one.server.context.db, { userId: alice.userId, scopes: ["os.notes:read", "os.notes:write"] });
    const note = (await alice.client.call("createNote", { body: { title: "Across", content: "start" } })).result.note;
    const yjs = openYjs(one.server, noteDocName(note.uuid), { token: key.apiKey });
    const hocuspocus = await openDoc(two.syncUrl, alice.apiKey, noteDocName(note.uuid));
    try {
      await yjs.synced;
      await seeEachOther(yjs, hocuspocus, "across instances");
      // Revoked by instance two: instance one closes the socket.
      await revokeApiKey(two.context.db, key.keyId);
      expect(await yjs.closed).toEqual({ code: 4403, reason: "access_revoked" });
    } finally {
      yjs.close();
      hocuspocus.close();
    }
  });

  it("counts a credential's sockets over both instances; an app disconnected through one closes its socket on the other", async () => {
    const name = workspaceDocName(alice.userId);
    const onOne = openYjs(one.server, name, { token: alice.apiKey });
    const onTwo = openYjs(two, name, { token: alice.apiKey });
    const app = await registerClient(one, "http://127.0.0.1:53684/callback", "App across instances");
    const { access } = await oauthTokens(one, new Browser(one), app, alice, "os.notes:read os.notes:write");
    const byApp = openYjs(one.server, name, { token: access });
    try {
      await Promise.all([onOne.synced, onTwo.synced, byApp.synced]);
      // The key holds both its sockets, one on each instance: a third is refused on either.
      for (const server of [one.server, two]) expect(await (await rawSocket(server, name, alice.apiKey)).closed).toBe(4529);
      onTwo.close();
      // Its slot goes back as instance two sees the socket close (and before that instance's next take).
      await expect.poll(() => two.context.sync.hocuspocus.documents.get(name)?.getConnectionsCount() ?? 0, PATIENCE).toBe(0);
      const reopened = openYjs(two, name, { token: alice.apiKey });
      await reopened.synced;
      reopened.close();

      const disconnected = await fetch(`${two.url}/api/v1/account/connected-apps/${app.clientId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${alice.apiKey}` },
      });
      expect(disconnected.status).toBe(200);
      expect(await byApp.closed).toEqual({ code: 4403, reason: "access_revoked" });
    } finally {
      for (const client of [onOne, onTwo, byApp]) client.close();
    }
  });
});
