import type { HocuspocusProvider } from "@hocuspocus/provider";
import { OutgoingMessage } from "@hocuspocus/server";
import { ALL_SCOPES, jsonToText, MAX_TYPE_DEPTH, NOTE_FRAGMENT, noteDocName, readNoteBody, TandemClient } from "@tandem/core";
import RedisClient from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { createApiKey, revokeApiKey } from "../src/auth/api-keys";
import type { RunningServer } from "../src/server";
import { ACCESS_POLL_MS } from "../src/sync/connection-guard";
import { InstanceConflictError } from "../src/system/instance-lease";
import {
  POSTGRES_URL,
  REDIS_URL,
  randomRedisPrefix,
  runCli,
  startAnotherInstance,
  startTestServer,
  type TestServer,
  type TestUser,
} from "./harness";
import { startRoundRobinProxy } from "./round-robin-proxy";
import { appendParagraph, openDoc, type SyncedDoc, until } from "./sync-client";

const bodyText = (doc: Y.Doc) => jsonToText(readNoteBody(doc));

/** Resolves once the awareness states (every client's) satisfy `check`, tested at each awareness change. */
function untilAwareness(provider: HocuspocusProvider, check: (states: Record<string, unknown>[]) => boolean): Promise<void> {
  const awareness = provider.awareness;
  if (!awareness) throw new Error("no awareness");
  const holds = () => check([...awareness.getStates().values()]);
  if (holds()) return Promise.resolve();
  return new Promise((resolve) => {
    const onChange = () => {
      if (!holds()) return;
      awareness.off("change", onChange);
      resolve();
    };
    awareness.on("change", onChange);
  });
}

/** Whether some client's awareness names `name` as its user. */
const someUser = (name: string) => (states: Record<string, unknown>[]) =>
  states.some((state) => (state.user as { name?: string } | undefined)?.name === name);

function closed(synced: SyncedDoc): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    synced.provider.on("close", ({ event }: { event: CloseEvent }) => resolve({ code: event.code, reason: event.reason })),
  );
}

describe.skipIf(!POSTGRES_URL)("documents across instances (PostgreSQL + Redis)", () => {
  let one: TestServer;
  let two: RunningServer;
  let alice: TestUser;
  /** Alice's client through instance two. */
  let viaTwo: TandemClient;
  const redis = { redisUrl: REDIS_URL, redisPrefix: randomRedisPrefix() };

  beforeAll(async () => {
    one = await startTestServer(redis, "postgres");
    two = await startAnotherInstance(one);
    alice = await one.addUser("alice");
    viaTwo = new TandemClient({ baseUrl: two.apiUrl, token: alice.apiKey, validateResponses: true });
  });
  afterAll(async () => {
    await two?.close();
    await one?.stop();
  });

  async function createNote(title: string, content: string) {
    return (await alice.client.call("createNote", { body: { title, content } })).result.note;
  }

  it("relays an edit on one instance to an editor on the other, and back, and awareness too", async () => {
    const note = await createNote("Across", "start");
    const onOne = await openDoc(one.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
    const onTwo = await openDoc(two.syncUrl, alice.apiKey, noteDocName(note.uuid));
    try {
      expect([onOne.outcome, onTwo.outcome]).toEqual(["synced", "synced"]);
      appendParagraph(onOne.doc, "typed on one");
      await until(onTwo.doc, () => bodyText(onTwo.doc).includes("typed on one"), "the edit on instance one");
      appendParagraph(onTwo.doc, "answered on two");
      await until(onOne.doc, () => bodyText(onOne.doc).includes("answered on two"), "the edit on instance two");

      onOne.provider.setAwarenessField("user", { name: "alice on one" });
      await untilAwareness(onTwo.provider, someUser("alice on one"));
      onTwo.provider.setAwarenessField("user", { name: "alice on two" });
      await untilAwareness(onOne.provider, someUser("alice on two"));
      // The last editor leaving instance one takes its cursor off instance two at once, not after a timeout.
      onOne.close();
      await untilAwareness(onTwo.provider, (states) => !someUser("alice on one")(states));
    } finally {
      onOne.close();
      onTwo.close();
    }
  });

  it("brings a REST PATCH through instance two to the editor on instance one, and stores it", async () => {
    const note = await createNote("Patched elsewhere", "before");
    const onOne = await openDoc(one.server.syncUrl, alice.apiKey, noteDocName(note.uuid));
    try {
      await viaTwo.call("updateNote", { params: { id: note.id }, body: { content: "<p>patched through two</p>" } });
      await until(onOne.doc, () => bodyText(onOne.doc).includes("patched through two"), "the PATCH through instance two");
      // Answered once stored: the stored document has it, whichever instance reads it.
      expect(jsonToText(readNoteBody(await one.server.context.sync.store.loadDoc(noteDocName(note.uuid))))).toContain(
        "patched through two",
      );
    } finally {
      onOne.close();
    }
    expect((await alice.client.call("getNote", { params: { id: note.id } })).note.markdown).toContain("patched through two");
  });

  it("waits for another instance's store of the same document to end, then stores (never skips)", async () => {
    const note = await createNote("Locked", "before");
    const name = noteDocName(note.uuid);
    const client = new RedisClient(REDIS_URL);
    try {
      // Another instance storing this document holds its lock (it would release it; this one expires).
      await client.set(`${redis.redisPrefix}:sync:${name}:lock`, "another-instance", "PX", 400);
      const started = Date.now();
      await viaTwo.call("updateNote", { params: { id: note.id }, body: { content: "<p>stored after the wait</p>" } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect(jsonToText(readNoteBody(await one.server.context.sync.store.loadDoc(name)))).toContain("stored after the wait");
    } finally {
      client.disconnect();
    }
  });

  it("stores an update relayed from an instance that died before storing it", async () => {
    const note = await createNote("Orphaned", "before");
    const name = noteDocName(note.uuid);
    const onTwo = await openDoc(two.syncUrl, alice.apiKey, name);
    const client = new RedisClient(REDIS_URL);
    try {
      // What an instance relayed just before it was killed, within its store debounce: an edit it never stored.
      const theirs = new Y.Doc();
      Y.applyUpdate(theirs, Y.encodeStateAsUpdate(onTwo.doc));
      appendParagraph(theirs, "relayed, then its instance died");
      const update = Y.encodeStateAsUpdate(theirs, Y.encodeStateVector(onTwo.doc));
      const sender = Buffer.from("host-killed");
      const message = new OutgoingMessage(name).createSyncMessage().writeUpdate(update).toUint8Array();
      await client.publish(
        `${redis.redisPrefix}:sync:${name}`,
        Buffer.concat([Buffer.from([sender.length]), sender, Buffer.from(message)]),
      );
      await until(onTwo.doc, () => bodyText(onTwo.doc).includes("relayed, then its instance died"), "the relayed edit");
    } finally {
      onTwo.close();
      client.disconnect();
    }
    // Instance two stores it (when the document unloads, or a few seconds after the edit came).
    await expect
      .poll(async () => jsonToText(readNoteBody(await one.server.context.sync.store.loadDoc(name))), { timeout: 10_000, interval: 100 })
      .toContain("relayed, then its instance died");
  });

  it("never relays an update the instance it came in through refused", async () => {
    const note = await createNote("Limits", "shallow");
    const name = noteDocName(note.uuid);
    const vandal = await openDoc(one.server.syncUrl, alice.apiKey, name);
    const writer = await openDoc(one.server.syncUrl, alice.apiKey, name);
    const onTwo = await openDoc(two.syncUrl, alice.apiKey, name);
    try {
      const refused = closed(vandal);
      vandal.doc.transact(() => {
        let parent: Y.XmlFragment = vandal.doc.getXmlFragment(NOTE_FRAGMENT);
        for (let i = 0; i <= MAX_TYPE_DEPTH + 5; i++) {
          const quote = new Y.XmlElement("blockquote");
          parent.insert(0, [quote]);
          parent = quote;
        }
        parent.insert(0, [new Y.XmlText("too deep")]);
      });
      expect((await refused).reason).toBe("too_deeply_nested");
      // Instance one handles the refusal before the later edit; the relay keeps that order.
      appendParagraph(writer.doc, "after the refusal");
      await until(onTwo.doc, () => bodyText(onTwo.doc).includes("after the refusal"), "the edit after the refused one");
      expect(bodyText(onTwo.doc)).not.toContain("too deep");
    } finally {
      vandal.close();
      writer.close();
      onTwo.close();
    }
  });

  it("converges clients that a round-robin proxy spreads over both instances", async () => {
    const proxy = await startRoundRobinProxy([one.server.url, two.url]);
    const editors: SyncedDoc[] = [];
    try {
      const viaProxy = new TandemClient({ baseUrl: `${proxy.url}/api/v1`, token: alice.apiKey, validateResponses: true });
      const note = (await viaProxy.call("createNote", { body: { title: "Behind one URL", content: "shared" } })).result.note;
      const syncUrl = `${proxy.url.replace("http", "ws")}/sync`;
      for (let i = 0; i < 4; i++) editors.push(await openDoc(syncUrl, alice.apiKey, noteDocName(note.uuid)));
      expect(editors.map((editor) => editor.outcome)).toEqual(["synced", "synced", "synced", "synced"]);
      expect(one.server.context.sync.hocuspocus.getConnectionsCount()).toBeGreaterThan(0);
      expect(two.context.sync.hocuspocus.getConnectionsCount()).toBeGreaterThan(0);

      for (const [i, editor] of editors.entries()) appendParagraph(editor.doc, `line ${i}`);
      const expected = ["line 0", "line 1", "line 2", "line 3"];
      await Promise.all(
        editors.map((editor) => until(editor.doc, () => expected.every((line) => bodyText(editor.doc).includes(line)), "every line")),
      );
      const states = editors.map((editor) => Y.encodeStateAsUpdate(editor.doc));
      const merged = new Y.Doc();
      for (const state of states) Y.applyUpdate(merged, state);
      for (const editor of editors) expect(bodyText(editor.doc)).toBe(bodyText(merged));
    } finally {
      for (const editor of editors) editor.close();
      await proxy.close();
    }
  });

  it("closes a sync connection on instance two within the epoch check when its key is revoked on instance one", async () => {
    const key = await createApiKey(one.server.context.db, { userId: alice.userId, scopes: ALL_SCOPES });
    const note = await createNote("Revocable", "text");
    const onTwo = await openDoc(two.syncUrl, key.apiKey, noteDocName(note.uuid));
    try {
      expect(onTwo.outcome).toBe("synced");
      const gone = closed(onTwo);
      const started = Date.now();
      await revokeApiKey(one.server.context.db, key.keyId);
      expect((await gone).reason).toBe("access revoked");
      // One poll interval, plus the re-check itself, with room for a loaded machine.
      expect(Date.now() - started).toBeLessThan(ACCESS_POLL_MS * 3);
    } finally {
      onTwo.close();
    }
  });

  describe("instances and leases", () => {
    it("refuses to start an instance without Redis beside live ones, in one plain line", async () => {
      const refused = await runCli(["serve", "--port", "0", "--database-url", one.databaseUrl as string], {
        TANDEM_LOG_LEVEL: "silent",
        TANDEM_REDIS_URL: "",
      });
      expect(refused.code).toBe(1);
      const lines = refused.stderr.trim().split("\n");
      expect(lines, refused.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^tandem-server: another Tandem instance \(id [0-9a-f-]+, host .+, pid \d+\) is running on this database; .*--redis-url/,
      );
    });

    it("refuses an instance beside a live one without Redis, or with another prefix; starts once that lease expired", async () => {
      const { db } = one.server.context;
      const now = Date.now();
      const lease = (id: string, redisPrefix: string | null, expiresIn: number) => ({
        id,
        host: "elsewhere.example",
        pid: 4242,
        pid_space: "elsewhere.example",
        redis_prefix: redisPrefix,
        started_at: new Date(now - 60_000).toISOString(),
        renewed_at: new Date(now - 60_000).toISOString(),
        expires_at: new Date(now + expiresIn).toISOString(),
      });
      try {
        await db
          .insertInto("server_instances")
          .values(lease("live-without-redis", null, 60_000))
          .execute();
        await expect(startAnotherInstance(one)).rejects.toThrow(InstanceConflictError);
        await expect(startAnotherInstance(one)).rejects.toThrow(/live-without-redis.*without Redis/);
        await db.deleteFrom("server_instances").where("id", "=", "live-without-redis").execute();

        await db
          .insertInto("server_instances")
          .values(lease("other-prefix", "someone-else", 60_000))
          .execute();
        await expect(startAnotherInstance(one)).rejects.toThrow(/Redis prefix "someone-else"/);
        await db.deleteFrom("server_instances").where("id", "=", "other-prefix").execute();

        // A lease that expired is an instance that died: it neither blocks a start nor stays.
        await db
          .insertInto("server_instances")
          .values(lease("crashed-without-redis", null, -1000))
          .execute();
        const third = await startAnotherInstance(one);
        await third.close();
        const ids = (await db.selectFrom("server_instances").select("id").execute()).map((row) => row.id);
        expect(ids).not.toContain("crashed-without-redis");
        expect(ids).toHaveLength(2);
      } finally {
        await db.deleteFrom("server_instances").where("host", "=", "elsewhere.example").execute();
      }
    });
  });
});

describe("an instance whose Redis is unreachable", () => {
  let t: TestServer;
  let alice: TestUser;
  beforeAll(async () => {
    // Nothing listens on port 1: ioredis keeps trying in the background.
    t = await startTestServer({ redisUrl: "redis://127.0.0.1:1", redisPrefix: randomRedisPrefix() });
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("answers a REST write 503 at once, changing nothing, instead of a 500 after ioredis gives up", async () => {
    const started = Date.now();
    const created = await alice.client.raw("createNote", { body: { title: "Not now", content: "later" } });
    expect(created.status).toBe(503);
    expect(created.body).toMatchObject({ success: false, error: "storage_unavailable" });
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await alice.client.call("listNotes", { query: {} })).notes).toEqual([]);
  });
});
