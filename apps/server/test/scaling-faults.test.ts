import type { HocuspocusProvider } from "@hocuspocus/provider";
import { NOTE_FRAGMENT, noteDocName, TandemClient } from "@tandem/core";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as Y from "yjs";
import { isStorageFailure } from "../src/db/storage-failure";
import type { RunningServer } from "../src/server";
import { ok, StreamReader } from "./delegation-fixture";
import { type PrivateRedis, startPrivateRedis, startTcpForwarder, type TcpForwarder } from "./fault-helpers";
import {
  createPostgresSchema,
  POSTGRES_URL,
  randomRedisPrefix,
  type ServerProcess,
  spawnServerProcess,
  startAnotherInstance,
  startTestServer,
  type TestServer,
  type TestUser,
} from "./harness";
import { type RoundRobinProxy, startRoundRobinProxy } from "./round-robin-proxy";
import { appendParagraph, openDoc, type SyncedDoc, until } from "./sync-client";

/**
 * Faults of a deployment of several instances (issue 24, docs/scaling.md "When a part fails"):
 * three instances behind a round-robin proxy (two in this process, one a real process of its own, so
 * it can be killed), on PostgreSQL reached through a TCP forwarder the test cuts, and on a Redis of
 * this file's own that the test kills and starts again. Whatever a client saw acknowledged (a sync
 * edit synced, a REST call answered 2xx) must be there afterwards.
 */

const paragraphs = (doc: Y.Doc) =>
  doc
    .getXmlFragment(NOTE_FRAGMENT)
    .toArray()
    .map((node) => (node instanceof Y.XmlElement ? node.toArray().map(String).join("") : ""))
    .join("\n");

/** Resolves once the server acknowledged every change the provider sent (it reconnects meanwhile if it must). */
function acknowledged(provider: HocuspocusProvider, timeoutMs = 20_000): Promise<void> {
  if (provider.unsyncedChanges === 0 && provider.isSynced) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      provider.off("unsyncedChanges", check);
      reject(new Error(`not acknowledged in ${timeoutMs} ms (${provider.unsyncedChanges} unsynced)`));
    }, timeoutMs);
    const check = () => {
      if (provider.unsyncedChanges !== 0) return;
      clearTimeout(timer);
      provider.off("unsyncedChanges", check);
      resolve();
    };
    provider.on("unsyncedChanges", check);
  });
}

/** How long a client may take to come back (reconnecting with its backoff) and catch up. */
const PATIENCE = 20_000;

describe.skipIf(!POSTGRES_URL)("faults of several instances behind one URL (PostgreSQL + Redis)", () => {
  let redis: PrivateRedis;
  let postgres: TcpForwarder;
  let schema: Awaited<ReturnType<typeof createPostgresSchema>>;
  let one: TestServer;
  let two: RunningServer;
  let three: ServerProcess;
  let proxy: RoundRobinProxy;
  let alice: TestUser;
  /** Alice's client through the proxy. */
  let client: TandemClient;
  let syncUrl: string;
  const open: SyncedDoc[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    postgres = await startTcpForwarder(Number(new URL(POSTGRES_URL as string).port || 5432));
    schema = await createPostgresSchema(POSTGRES_URL as string);
    const viaForwarder = new URL(schema.url);
    viaForwarder.port = String(postgres.port);
    const shared = { secretKey: `faults-${randomRedisPrefix()}`, redisUrl: redis.url, redisPrefix: randomRedisPrefix() };
    // A slow fallback tick (the ping interval caps it): a stream event arriving within 10 s came through Redis.
    one = await startTestServer({ ...shared, databaseUrl: viaForwarder.toString(), streamPollMs: 20_000, streamPingMs: 30_000 });
    two = await startAnotherInstance(one);
    three = await spawnServerProcess(["--database-url", viaForwarder.toString(), "--redis-url", redis.url], {
      TANDEM_SECRET_KEY: shared.secretKey,
      TANDEM_REDIS_PREFIX: shared.redisPrefix,
    });
    proxy = await startRoundRobinProxy([one.server.url, two.url, three.url]);
    alice = await one.addUser("alice");
    client = new TandemClient({ baseUrl: `${proxy.url}/api/v1`, token: alice.apiKey, validateResponses: true });
    syncUrl = `${proxy.url.replace("http", "ws")}/sync`;
  });
  afterAll(async () => {
    for (const editor of open) editor.close();
    await proxy?.close();
    await three?.stop();
    await two?.close();
    await one?.stop();
    await schema?.drop();
    await postgres?.close();
    await redis?.stop();
  });

  /** The fixtures' view of the server through the proxy. */
  const via = { fetch: (pathAndQuery: string, init?: RequestInit) => fetch(`${proxy.url}${pathAndQuery}`, init) } as TestServer;
  /** The same, straight to one instance. */
  const through = (server: RunningServer) =>
    ({ fetch: (pathAndQuery: string, init?: RequestInit) => fetch(`${server.url}${pathAndQuery}`, init) }) as TestServer;

  /** Another user, connected with alice both ways (so they may message each other). */
  async function contact(name: string): Promise<TestUser> {
    const other = await one.addUser(name);
    await ok(via, alice.apiKey, "POST", "/network/request", { to: other.username });
    await ok(via, other.apiKey, "POST", "/network/request", { to: alice.username });
    return other;
  }
  const contentOf = (event: { data: Record<string, unknown> }) => (event.data.message as { content?: string } | undefined)?.content;

  async function createNote(title: string): Promise<{ id: number; docName: string }> {
    const { note } = (await client.call("createNote", { body: { title, content: "" } })).result;
    return { id: note.id, docName: noteDocName(note.uuid) };
  }

  async function editor(url: string, docName: string): Promise<SyncedDoc> {
    const synced = await openDoc(url, alice.apiKey, docName);
    open.push(synced);
    expect(synced.outcome).toBe("synced");
    return synced;
  }

  /** The note's text as the server answers it through the proxy (any instance). */
  async function storedText(id: number): Promise<string> {
    return (await client.call("getNote", { params: { id } })).note.markdown;
  }

  it("Redis restarted mid-session: edits keep being acknowledged, nothing is lost, and relaying resumes by itself", async () => {
    const note = await createNote("Through a Redis restart");
    const onOne = await editor(one.server.syncUrl, note.docName);
    const onThree = await editor(three.syncUrl, note.docName);
    appendParagraph(onOne.doc, "before the restart");
    await until(onThree.doc, () => paragraphs(onThree.doc).includes("before the restart"), "the edit relayed before the restart", PATIENCE);

    const other = await createNote("Opened while Redis is away");
    const erin = await contact("erin");
    const stream = StreamReader.openAgentStream(through(two), alice);
    await expect.poll(() => stream.status).toBe(200);

    await redis.kill();
    // A client opening a document open nowhere (its instance must subscribe first) gets in once Redis is back.
    const late = openDoc(syncUrl, alice.apiKey, other.docName);
    // Each instance still takes (and stores) what comes in through it.
    appendParagraph(onOne.doc, "during the outage, through one");
    appendParagraph(onThree.doc, "during the outage, through three");
    await Promise.all([acknowledged(onOne.provider), acknowledged(onThree.provider)]);
    // REST writes may be refused (503) while Redis is away; those answered 2xx count.
    const todos: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await client.raw("createTodo", { body: { title: `todo during the outage ${i}` } });
      expect([201, 503]).toContain(answer.status);
      if (answer.status === 201) todos.push(`todo during the outage ${i}`);
    }

    await redis.start();
    // Relaying resumes by itself: an edit after the restart reaches the other instance, and with it what each missed.
    appendParagraph(onOne.doc, "after the restart");
    await until(onThree.doc, () => paragraphs(onThree.doc).includes("after the restart"), "an edit relayed after the restart", PATIENCE);
    const all = ["before the restart", "during the outage, through one", "during the outage, through three", "after the restart"];
    await until(onThree.doc, () => all.every((line) => paragraphs(onThree.doc).includes(line)), "both instances level", PATIENCE);
    await until(onOne.doc, () => all.every((line) => paragraphs(onOne.doc).includes(line)), "both instances level", PATIENCE);
    await acknowledged(onOne.provider);
    onOne.close();
    onThree.close();
    const lateEditor = await late;
    open.push(lateEditor);
    expect(lateEditor.outcome).toBe("synced");
    // Stream wake-ups resume too: a message posted on one reaches the stream held on two well before
    // the fallback tick (20 s here), whether its wake-up or the resync on resubscribing brings it.
    await ok(through(one.server), erin.apiKey, "POST", "/agent/message", {
      to: alice.username,
      message: "after the restart",
      mode: "human",
    });
    await stream.until((s) => s.events.some((e) => contentOf(e) === "after the restart"), 10_000);
    await stream.close();

    // Stored: whichever instance answers, every acknowledged line is there.
    await expect
      .poll(() => storedText(note.id), { timeout: 15_000, interval: 250 })
      .toSatisfy((text: string) => all.every((line) => text.includes(line)));
    const titles = (await client.call("listTodos", { query: {} })).result.todos.map((todo) => todo.title);
    for (const title of todos) expect(titles).toContain(title);
    // And REST writes are taken again once Redis is back.
    expect((await client.raw("createTodo", { body: { title: "after the restart" } })).status).toBe(201);
  });

  it("PostgreSQL briefly unreachable: requests needing storage answer 503 (no 500, no hang), then recover with nothing lost", async () => {
    const note = await createNote("Through a database outage");
    const onOne = await editor(one.server.syncUrl, note.docName);
    const onThree = await editor(three.syncUrl, note.docName);
    appendParagraph(onOne.doc, "before the outage, through one");
    appendParagraph(onThree.doc, "before the outage, through three");
    await Promise.all([acknowledged(onOne.provider), acknowledged(onThree.provider)]);

    const other = await createNote("Opened during the outage");
    const dave = await contact("dave");
    const stream = StreamReader.openAgentStream(through(two), alice);
    await expect.poll(() => stream.status).toBe(200);

    // A transaction open across the cut, its connection checked out and idle between two statements (as
    // during a store's merge): the dropped connection must fail its next statement, not end the process.
    let cutDone = () => {};
    const untilCut = new Promise<void>((resolve) => {
      cutDone = resolve;
    });
    const held = one.server.context.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      await untilCut;
      await sql`select 1`.execute(trx);
    });
    await postgres.cut();
    cutDone();
    let late: Promise<SyncedDoc>;
    try {
      await expect(held).rejects.toSatisfy(isStorageFailure);
      // A client opening a document meanwhile is told to come back (not refused), and gets in once the database is.
      late = openDoc(syncUrl, alice.apiKey, other.docName);
      // Every instance answers 503 for what needs storage, at once.
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        const read = await client.raw("listNotes", { query: {} });
        expect(read.status).toBe(503);
        const write = await client.raw("createTodo", { body: { title: "refused" } });
        expect(write.status).toBe(503);
        expect(write.body).toMatchObject({ success: false, error: "storage_unavailable" });
        expect(Date.now() - started).toBeLessThan(10_000);
      }
      // Editors of open documents keep editing: their instances take and relay the edits (kept in memory,
      // stored once the database is back), checked against the quota last read.
      appendParagraph(onOne.doc, "during the outage, through one");
      appendParagraph(onThree.doc, "during the outage, through three");
      await Promise.all([acknowledged(onOne.provider), acknowledged(onThree.provider)]);
      // Access checked again meanwhile (as when a revocation is signalled) cannot be read: that is no revocation.
      await one.server.context.sync.connections.recheck();
    } finally {
      await postgres.restore();
    }
    // The editor whose check could not be made comes back by itself and goes on.
    appendParagraph(onOne.doc, "after the outage, through one");
    await acknowledged(onOne.provider);
    await until(
      onThree.doc,
      () => paragraphs(onThree.doc).includes("after the outage, through one"),
      "the edit after the outage",
      PATIENCE,
    );
    const all = [
      "before the outage, through one",
      "before the outage, through three",
      "during the outage, through one",
      "during the outage, through three",
      "after the outage, through one",
    ];
    await until(onOne.doc, () => all.every((line) => paragraphs(onOne.doc).includes(line)), "the edits of both instances", PATIENCE);
    await expect.poll(async () => (await client.raw("listNotes", { query: {} })).status, { timeout: 15_000, interval: 250 }).toBe(200);
    const lateEditor = await late;
    open.push(lateEditor);
    expect(lateEditor.outcome).toBe("synced");
    // The stream held through the outage still carries what is written after it.
    await ok(via, dave.apiKey, "POST", "/agent/message", { to: alice.username, message: "after the outage", mode: "human" });
    await stream.until((s) => s.events.some((e) => contentOf(e) === "after the outage"), 10_000);
    expect(stream.ended).toBe(false);
    await stream.close();
    onOne.close();
    onThree.close();
    // The stores that failed are retried until they go through; nothing acknowledged is lost.
    await expect
      .poll(() => storedText(note.id), { timeout: 20_000, interval: 250 })
      .toSatisfy((text: string) => all.every((line) => text.includes(line)));
    const titles = (await client.call("listTodos", { query: {} })).result.todos.map((todo) => todo.title);
    expect(titles).not.toContain("refused");
  });

  it("kill -9 of one instance while clients edit through the URL: they reconnect, and every acknowledged edit is there", async () => {
    const note = await createNote("Through a crash");
    // Editors spread over the instances by the proxy; which instance each landed on is learnt from the in-process ones.
    const editors: SyncedDoc[] = [];
    const onThree: SyncedDoc[] = [];
    const countHere = () => one.server.context.sync.hocuspocus.getConnectionsCount() + two.context.sync.hocuspocus.getConnectionsCount();
    for (let i = 0; i < 6; i++) {
      const before = countHere();
      const synced = await editor(syncUrl, note.docName);
      (countHere() > before ? editors : onThree).push(synced);
    }
    expect(onThree.length).toBeGreaterThanOrEqual(2);
    editors.push(...onThree.slice(1));
    // One editor on the instance about to die edits, sees it acknowledged, and leaves: only the instances hold its edit.
    const leaver = onThree[0] as SyncedDoc;
    appendParagraph(leaver.doc, "acknowledged by three, then its editor left");
    await acknowledged(leaver.provider);
    leaver.close();

    const acked: string[] = ["acknowledged by three, then its editor left"];
    const restAcked: string[] = [];
    let killed: Promise<void> | undefined;
    /** Each editor types line after line, each once the previous one was acknowledged; three dies after a few. */
    const typing = editors.map(async (synced, e) => {
      for (let i = 0; i < 6; i++) {
        const line = `editor ${e} line ${i}`;
        appendParagraph(synced.doc, line);
        await acknowledged(synced.provider);
        acked.push(line);
        if (acked.length === 6) killed = three.kill();
      }
    });
    /** REST writes through the URL meanwhile; a request cut by the kill is not acknowledged. */
    const writing = (async () => {
      for (let i = 0; i < 8; i++) {
        const title = `todo ${i} through the crash`;
        const answer = await client.raw("createTodo", { body: { title } }).catch(() => undefined);
        if (answer?.status === 201) restAcked.push(title);
      }
    })();
    await Promise.all([...typing, writing]);
    await killed;
    expect(killed).toBeDefined();

    // The clients of the dead instance reconnected through the URL and converged with everyone.
    for (const synced of editors) {
      await until(synced.doc, () => acked.every((line) => paragraphs(synced.doc).includes(line)), "every acknowledged line", PATIENCE);
    }
    for (const synced of editors) synced.close();
    await expect
      .poll(() => storedText(note.id), { timeout: 20_000, interval: 250 })
      .toSatisfy((text: string) => acked.every((line) => text.includes(line)));
    const titles = (await client.call("listTodos", { query: {} })).result.todos.map((todo) => todo.title);
    for (const title of restAcked) expect(titles).toContain(title);
    expect(restAcked.length).toBeGreaterThan(0);
  }, 90_000);
});
