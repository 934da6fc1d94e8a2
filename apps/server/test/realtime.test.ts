import { buildOpenApiDocument } from "@tandem/core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ServerConfigSchema } from "../src/config";
import type { BridgeEventType } from "../src/delegation/realtime/event-log";
import { startServer } from "../src/server";
import { type Bridge, call, insertGrant, insertQueuedMessage, registerBridge, StreamReader, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The transport's tests use made-up kinds (`test.*`); the server itself appends only the bridges' kinds. */
const testKind = (type: string) => type as BridgeEventType;

function append(ts: TestServer, bridge: Pick<Bridge, "endpointId">, type: string, data: Record<string, unknown> = {}) {
  return ts.server.context.realtime.appendNow(ts.server.context.db, bridge.endpointId, testKind(type), data);
}

async function appendMany(ts: TestServer, bridge: Bridge, type: string, count: number, pauseMs = 0): Promise<string[]> {
  const cursors: string[] = [];
  for (let i = 0; i < count; i++) {
    cursors.push(await append(ts, bridge, type, { i }));
    if (pauseMs > 0) await sleep(pauseMs);
  }
  return cursors;
}

interface PollBody {
  success: boolean;
  events: { cursor: string; type: string; endpointId: string; data: Record<string, unknown> }[];
  cursor: string;
}

function poll(ts: TestServer, bridge: Pick<Bridge, "deviceToken" | "endpointId">, query: Record<string, string> = {}) {
  const params = new URLSearchParams({ endpointId: bridge.endpointId, ...query });
  return call<PollBody>(ts, bridge.deviceToken, "GET", `/local-realtime/poll?${params}`);
}

/** A queued message and its delivery to `bridge`, written straight to storage (messages are another area's). */
async function queuedMessage(ts: TestServer, sender: TestUser, bridge: Bridge, label: string) {
  const route = { endpointId: bridge.endpointId, sessionHandle: "sess_x" };
  const grantId = `cs_${label}`;
  await insertGrant(ts, { id: grantId, requesterId: sender.userId, recipientId: bridge.user.userId, status: "active", route });
  const message = { id: `msg_${label}`, deliveryId: `dlv_${label}` };
  await insertQueuedMessage(ts, {
    ...message,
    grantId,
    senderId: sender.userId,
    recipientId: bridge.user.userId,
    route,
    clientMessageId: `c_${label}`,
  });
  return message;
}

async function delivery(ts: TestServer, deliveryId: string) {
  return ts.server.context.db
    .selectFrom("messages")
    .select(["status", "dispatched_at"])
    .where("delivery_id", "=", deliveryId)
    .executeTakeFirstOrThrow();
}

async function dispatchAudits(ts: TestServer, deliveryId: string) {
  return ts.server.context.db
    .selectFrom("audit_log")
    .selectAll()
    .where("action", "=", "delivery.dispatch")
    .where("object_id", "=", deliveryId)
    .execute();
}

function streamCursors(reader: StreamReader, type: string): string[] {
  return reader.events.filter((e) => e.type === type).map((e) => e.cursor);
}

describe.each(storages("realtime suite"))("realtime on %s", (storage) => {
  describe("with default settings", () => {
    let ts: TestServer;
    let alice: TestUser;
    let bob: TestUser;
    let aliceBridge: Bridge;
    const readers: StreamReader[] = [];
    const open = (bridge: Pick<Bridge, "deviceToken" | "endpointId">, options?: Parameters<typeof StreamReader.open>[2]) => {
      const reader = StreamReader.open(ts, bridge, options);
      readers.push(reader);
      return reader;
    };

    // One server for these tests; each test has users and a bridge of its own (cursors count per endpoint).
    let testNumber = 0;
    beforeAll(async () => {
      ts = await startTestServer({ shutdownGraceMs: 30_000 }, storage);
    });
    beforeEach(async () => {
      testNumber += 1;
      alice = await ts.addUser(`alice${testNumber}`);
      bob = await ts.addUser(`bob${testNumber}`);
      aliceBridge = await registerBridge(ts, alice, "laptop");
    });
    afterEach(async () => {
      await Promise.all(readers.splice(0).map((r) => r.close()));
    });
    afterAll(async () => {
      await ts?.stop();
    });

    it("answers with the event-stream headers at once, and frames with event, data and id", async () => {
      const response = await ts.fetch(`/api/v1/local-realtime/stream?endpointId=${aliceBridge.endpointId}`, {
        headers: { authorization: `Bearer ${aliceBridge.deviceToken}`, accept: "text/event-stream" },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
      expect(response.headers.get("x-accel-buffering")).toBe("no");
      const cursor = await append(ts, aliceBridge, "grant.request", { hello: "world" });
      const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
      let text = "";
      while (!text.includes("\n\n")) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
      }
      await reader.cancel();
      const [eventLine, dataLine, idLine] = text.split("\n");
      expect(eventLine).toBe("event: grant.request");
      expect(idLine).toBe(`id: ${cursor}`);
      const data = JSON.parse((dataLine as string).slice("data: ".length));
      expect(data).toEqual({
        cursor,
        type: "grant.request",
        endpointId: aliceBridge.endpointId,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: { hello: "world" },
      });
    });

    it("replays the events after the cursor, then follows live ones", async () => {
      const first = await appendMany(ts, aliceBridge, "test.replay", 5);
      const reader = open(aliceBridge, { cursor: first[1] });
      await reader.until((r) => r.events.length === 3);
      expect(streamCursors(reader, "test.replay")).toEqual(first.slice(2));
      const live = await appendMany(ts, aliceBridge, "test.live", 3);
      await reader.until((r) => r.events.length === 6);
      expect(reader.events.map((e) => e.cursor)).toEqual([...first.slice(2), ...live]);
      expect(reader.ids).toEqual(reader.events.map((e) => e.cursor));
      // Cursors are decimal strings, increasing per endpoint.
      expect(reader.events.map((e) => Number(e.cursor))).toEqual([3, 4, 5, 6, 7, 8]);
      // Without a cursor the stream starts at the beginning.
      const fromStart = open(aliceBridge);
      await fromStart.until((r) => r.events.length === 8);
      expect(fromStart.events.map((e) => e.cursor)).toEqual([...first, ...live]);
    });

    it("loses nothing and repeats nothing when the bridge disconnects mid-burst and resumes with its cursor", async () => {
      const first = open(aliceBridge);
      // Spread a little, so the first stream is closed while the burst is still being written.
      const burst = appendMany(ts, aliceBridge, "test.burst", 200, 2);
      await first.until((r) => r.events.length >= 50, 20_000);
      await first.close();
      const expected = await burst;
      const seenFirst = streamCursors(first, "test.burst");
      expect(seenFirst.length).toBeGreaterThanOrEqual(50);
      const second = open(aliceBridge, { cursor: first.lastCursor });
      await second.until((r) => seenFirst.length + r.events.length >= 200, 20_000);
      await sleep(100);
      expect(streamCursors(second, "test.burst").length).toBeGreaterThan(0);
      expect([...seenFirst, ...streamCursors(second, "test.burst")]).toEqual(expected);
    });

    it("resumes across a server restart with nothing lost or repeated", async () => {
      const before = await appendMany(ts, aliceBridge, "test.restart", 30);
      const first = open(aliceBridge);
      await first.until((r) => r.events.length >= 10);
      // The server ends open streams on shutdown (shutdownGraceMs is 30 s: waiting for it would time out).
      await ts.restart();
      await first.until((r) => r.ended, 10_000);
      const after = await appendMany(ts, aliceBridge, "test.restart", 30);
      const second = open(aliceBridge, { cursor: first.lastCursor });
      await second.until((r) => first.events.length + r.events.length >= 60, 10_000);
      await sleep(100);
      expect([...streamCursors(first, "test.restart"), ...streamCursors(second, "test.restart")]).toEqual([...before, ...after]);
    });

    it("ends every open stream when the server shuts down, without waiting for the grace period", async () => {
      const bobBridge = await registerBridge(ts, bob, "desktop");
      const readersOpen = [open(aliceBridge), open(aliceBridge), open(bobBridge)];
      await append(ts, aliceBridge, "test.ready");
      const { realtime } = ts.server.context;
      await expect.poll(() => realtime.openStreamCount(aliceBridge.endpointId) + realtime.openStreamCount(bobBridge.endpointId)).toBe(3);
      await ts.restart();
      for (const reader of readersOpen) await reader.until((r) => r.ended, 10_000);
    }, 20_000);

    it("honours Last-Event-ID over the query's cursor", async () => {
      const cursors = await appendMany(ts, aliceBridge, "test.resume", 6);
      const reader = open(aliceBridge, { cursor: cursors[0], lastEventId: cursors[3] });
      await reader.until((r) => r.events.length === 2);
      await sleep(100);
      expect(streamCursors(reader, "test.resume")).toEqual(cursors.slice(4));
      // An empty header falls back to the query's cursor.
      const fallback = open(aliceBridge, { cursor: cursors[4], lastEventId: "" });
      await fallback.until((r) => r.events.length === 1);
      expect(streamCursors(fallback, "test.resume")).toEqual(cursors.slice(5));
    });

    it("pages a long backlog in order (more than one page of 500)", async () => {
      const { db, realtime } = ts.server.context;
      const { endpointId } = aliceBridge; // (not the variable: a loop outliving a timed-out test must not write to the next one's)
      const batch = realtime.batch();
      await db.transaction().execute(async (tx) => {
        for (let i = 0; i < 1_100; i++) await batch.append(tx, endpointId, testKind("test.backlog"), { i });
      });
      batch.publish();
      const reader = open(aliceBridge, { cursor: "50" });
      await reader.until((r) => r.events.length === 1_050, 20_000);
      expect(reader.events.map((e) => Number(e.cursor))).toEqual(Array.from({ length: 1_050 }, (_, i) => i + 51));
    });

    it("pages polls, echoes the cursor when nothing is new, and honours limit", async () => {
      const cursors = await appendMany(ts, aliceBridge, "test.poll", 7);
      const page1 = await poll(ts, aliceBridge, { limit: "3" });
      expect(page1.status).toBe(200);
      expect(page1.body.success).toBe(true);
      expect(page1.body.events.map((e) => e.cursor)).toEqual(cursors.slice(0, 3));
      expect(page1.body.cursor).toBe(cursors[2]);
      expect(page1.body.events[0]).toMatchObject({ type: "test.poll", endpointId: aliceBridge.endpointId, data: { i: 0 } });
      const page2 = await poll(ts, aliceBridge, { cursor: page1.body.cursor });
      expect(page2.body.events.map((e) => e.cursor)).toEqual(cursors.slice(3));
      expect(page2.body.cursor).toBe(cursors[6]);
      const empty = await poll(ts, aliceBridge, { cursor: page2.body.cursor });
      expect(empty.body).toEqual({ success: true, events: [], cursor: cursors[6] });
      // A cursor beyond the log is echoed as given.
      expect((await poll(ts, aliceBridge, { cursor: "9000" })).body).toEqual({ success: true, events: [], cursor: "9000" });
      // Empty cursor: from the start.
      expect((await poll(ts, aliceBridge, { cursor: "" })).body.events).toHaveLength(7);
    });

    it("answers at most 500 events per poll", async () => {
      const { db, realtime } = ts.server.context;
      const batch = realtime.batch();
      await db.transaction().execute(async (tx) => {
        for (let i = 0; i < 520; i++) await batch.append(tx, aliceBridge.endpointId, testKind("test.many"), { i });
      });
      const first = await poll(ts, aliceBridge);
      expect(first.body.events).toHaveLength(500);
      expect(first.body.cursor).toBe("500");
      const rest = await poll(ts, aliceBridge, { cursor: first.body.cursor, limit: "500" });
      expect(rest.body.events.map((e) => e.cursor)).toEqual(Array.from({ length: 20 }, (_, i) => String(501 + i)));
    });

    it("refuses bad queries with a 400 naming the field", async () => {
      const base = `/local-realtime/poll?endpointId=${aliceBridge.endpointId}`;
      for (const [query, field] of [
        ["&cursor=abc", "query.cursor"],
        ["&cursor=-1", "query.cursor"],
        ["&cursor=1.5", "query.cursor"],
        ["&cursor=99999999999999999999", "query.cursor"],
        ["&cursor=1&cursor=2", "query.cursor"],
        ["&limit=0", "query.limit"],
        ["&limit=501", "query.limit"],
        ["&limit=ten", "query.limit"],
      ] as const) {
        const response = await call(ts, aliceBridge.deviceToken, "GET", `${base}${query}`);
        expect(response.status, query).toBe(400);
        expect(response.body).toMatchObject({ success: false, error: "invalid_request" });
        expect(String(response.body.message), query).toContain(field);
      }
      const noEndpoint = await call(ts, aliceBridge.deviceToken, "GET", "/local-realtime/stream");
      expect(noEndpoint.status).toBe(400);
      expect(String(noEndpoint.body.message)).toContain("query.endpointId");
      const badStreamCursor = await call(
        ts,
        aliceBridge.deviceToken,
        "GET",
        `/local-realtime/stream?endpointId=${aliceBridge.endpointId}&cursor=x`,
      );
      expect(badStreamCursor.status).toBe(400);
      expect(String(badStreamCursor.body.message)).toContain("query.cursor");
      const badHeader = await ts.fetch(`/api/v1/local-realtime/stream?endpointId=${aliceBridge.endpointId}`, {
        headers: { authorization: `Bearer ${aliceBridge.deviceToken}`, "last-event-id": "yesterday" },
      });
      expect(badHeader.status).toBe(400);
      expect(await badHeader.json()).toMatchObject({
        success: false,
        error: "invalid_request",
        message: expect.stringContaining("Last-Event-ID"),
      });
    });

    it("gives a device token its own endpoint only: any other id is 404 endpoint_not_found", async () => {
      const bobBridge = await registerBridge(ts, bob, "desktop");
      const aliceOther = await registerBridge(ts, alice, "phone");
      await append(ts, bobBridge, "test.secret", { secret: true });
      for (const endpointId of [bobBridge.endpointId, aliceOther.endpointId, "ep_does_not_exist"]) {
        for (const path of ["/local-realtime/stream", "/local-realtime/poll"]) {
          const response = await call(ts, aliceBridge.deviceToken, "GET", `${path}?endpointId=${endpointId}`);
          expect(response.status, `${path} ${endpointId}`).toBe(404);
          expect(response.body).toMatchObject({ success: false, error: "endpoint_not_found" });
          expect(JSON.stringify(response.body)).not.toContain("secret");
        }
      }
    });

    it("accepts device tokens only: 401 without a credential or with a bad one, 403 wrong_credential_type for a user key", async () => {
      for (const path of ["/local-realtime/stream", "/local-realtime/poll"]) {
        const url = `${path}?endpointId=${aliceBridge.endpointId}`;
        const none = await call(ts, null, "GET", url);
        expect(none.status).toBe(401);
        expect(none.body).toMatchObject({ success: false, error: "missing_credential" });
        const bad = await call(ts, `${aliceBridge.deviceToken.slice(0, -4)}AAAA`, "GET", url);
        expect(bad.status).toBe(401);
        expect(bad.body).toMatchObject({ success: false, error: "invalid_credential" });
        const userKey = await call(ts, alice.apiKey, "GET", url);
        expect(userKey.status).toBe(403);
        expect(userKey.body).toMatchObject({ success: false, error: "wrong_credential_type" });
      }
    });

    it("marks queued deliveries dispatched when their event is written to a stream, once, with an audit entry", async () => {
      const message = await queuedMessage(ts, bob, aliceBridge, "stream1");
      expect(await delivery(ts, message.deliveryId)).toEqual({ status: "queued", dispatched_at: null });
      await append(ts, aliceBridge, "message.dispatch", { envelope: { id: message.id }, deliveryId: message.deliveryId });
      const reader = open(aliceBridge);
      await reader.next("message.dispatch");
      await expect.poll(async () => (await delivery(ts, message.deliveryId)).status).toBe("dispatched");
      expect((await delivery(ts, message.deliveryId)).dispatched_at).toMatch(/Z$/);
      const audits = await dispatchAudits(ts, message.deliveryId);
      expect(audits).toHaveLength(1);
      expect(audits[0]).toMatchObject({
        actor_id: alice.userId,
        actor_credential: `device:${aliceBridge.endpointId}`,
        object_type: "delivery",
      });
      expect([audits[0]?.party_a, audits[0]?.party_b].sort()).toEqual([alice.userId, bob.userId].sort());
      // A replay writes the event again but changes nothing.
      const replay = open(aliceBridge);
      await replay.next("message.dispatch");
      await sleep(200);
      expect(await dispatchAudits(ts, message.deliveryId)).toHaveLength(1);
    });

    it("marks queued deliveries dispatched when poll returns their event; only queued ones, only the endpoint's own", async () => {
      const queued = await queuedMessage(ts, bob, aliceBridge, "poll1");
      const acked = await queuedMessage(ts, bob, aliceBridge, "poll2");
      await ts.server.context.db.updateTable("messages").set({ status: "device_acked" }).where("id", "=", acked.id).execute();
      const bobBridge = await registerBridge(ts, bob, "desktop");
      const elsewhere = await queuedMessage(ts, alice, bobBridge, "poll3");
      // An event naming someone else's delivery (never written by the server, but fail closed).
      await append(ts, aliceBridge, "message.dispatch", { envelope: {}, deliveryId: elsewhere.deliveryId });
      await append(ts, aliceBridge, "message.dispatch", { envelope: {}, deliveryId: queued.deliveryId });
      await append(ts, aliceBridge, "message.dispatch", { envelope: {}, deliveryId: acked.deliveryId });
      await append(ts, aliceBridge, "message.dispatch", { envelope: {} });
      const answer = await poll(ts, aliceBridge);
      expect(answer.body.events).toHaveLength(4);
      expect(await delivery(ts, queued.deliveryId)).toMatchObject({ status: "dispatched" });
      expect(await delivery(ts, acked.deliveryId)).toEqual({ status: "device_acked", dispatched_at: null });
      expect(await delivery(ts, elsewhere.deliveryId)).toEqual({ status: "queued", dispatched_at: null });
      expect(await dispatchAudits(ts, queued.deliveryId)).toHaveLength(1);
      expect(await dispatchAudits(ts, acked.deliveryId)).toHaveLength(0);
      await poll(ts, aliceBridge);
      expect(await dispatchAudits(ts, queued.deliveryId)).toHaveLength(1);
    });

    it("lets the runtime layer end an endpoint's open streams (revocation, token rotation)", async () => {
      const bobBridge = await registerBridge(ts, bob, "desktop");
      const a1 = open(aliceBridge);
      const a2 = open(aliceBridge);
      const b = open(bobBridge);
      await append(ts, aliceBridge, "test.ready");
      await append(ts, bobBridge, "test.ready");
      for (const reader of [a1, a2, b]) await reader.next("test.ready");
      expect(ts.server.context.realtime.openStreamCount(aliceBridge.endpointId)).toBe(2);
      expect(ts.server.context.realtime.endStreams(aliceBridge.endpointId)).toBe(2);
      await a1.until((r) => r.ended);
      await a2.until((r) => r.ended);
      expect(b.ended).toBe(false);
      expect(ts.server.context.realtime.openStreamCount(aliceBridge.endpointId)).toBe(0);
      expect(ts.server.context.realtime.openStreamCount(bobBridge.endpointId)).toBe(1);
    });

    it("caps one endpoint's open streams: a new stream beyond the cap ends the oldest; the newest keep working", async () => {
      const bobBridge = await registerBridge(ts, bob, "desktop");
      const bobStream = open(bobBridge);
      const first = await append(ts, aliceBridge, "test.cap");
      const streams: StreamReader[] = [];
      for (let i = 0; i < 10; i++) {
        const reader = open(aliceBridge);
        await reader.next("test.cap");
        streams.push(reader);
      }
      // Issue #10, point 15: one token cannot hold more than MAX_STREAMS_PER_ENDPOINT (4) streams.
      expect(ts.server.context.realtime.openStreamCount(aliceBridge.endpointId)).toBe(4);
      for (const reader of streams.slice(0, 6)) await reader.until((r) => r.ended);
      const newest = streams.slice(6);
      expect(newest.every((r) => !r.ended)).toBe(true);
      // Another endpoint's stream is not affected, and the remaining ones follow live events.
      expect(bobStream.ended).toBe(false);
      const next = await append(ts, aliceBridge, "test.cap");
      for (const reader of newest) expect((await reader.next("test.cap", Number(first))).cursor).toBe(next);
    });

    it("ends the streams of a rotated or revoked token through the runtime routes; the new token resumes with the cursor", async () => {
      const first = open(aliceBridge);
      const before = await append(ts, aliceBridge, "test.rotate");
      await first.next("test.rotate");
      // Re-registering the same device rotates its token: the old token's stream ends.
      const rotated = await registerBridge(ts, alice, "laptop");
      expect(rotated.endpointId).toBe(aliceBridge.endpointId);
      await first.until((r) => r.ended);
      const stale = await call(ts, aliceBridge.deviceToken, "GET", `/local-realtime/stream?endpointId=${aliceBridge.endpointId}`);
      expect(stale.status).toBe(401);
      const after = await append(ts, rotated, "test.rotate");
      const second = open(rotated, { cursor: before });
      expect((await second.next("test.rotate")).cursor).toBe(after);
      // Revoking the endpoint ends its stream at once.
      expect((await call(ts, alice.apiKey, "DELETE", `/local-agent/endpoints/${rotated.endpointId}`)).status).toBeLessThan(300);
      await second.until((r) => r.ended);
      expect(ts.server.context.realtime.openStreamCount(rotated.endpointId)).toBe(0);
    });

    it("documents the stream as text/event-stream in OpenAPI", () => {
      const document = buildOpenApiDocument() as {
        paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, unknown> }> }>>;
      };
      expect(Object.keys(document.paths["/local-realtime/stream"]?.get?.responses["200"]?.content ?? {})).toEqual(["text/event-stream"]);
      expect(Object.keys(document.paths["/local-realtime/poll"]?.get?.responses["200"]?.content ?? {})).toEqual(["application/json"]);
    });
  });

  describe("with short timers", () => {
    let ts: TestServer;
    let alice: TestUser;
    let bridge: Bridge;
    const readers: StreamReader[] = [];

    afterEach(async () => {
      await Promise.all(readers.splice(0).map((r) => r.close()));
      await ts.stop();
    });

    it("sends `: ping` when idle, and picks up events it was not told about (another instance's) on that tick", async () => {
      ts = await startTestServer({ streamPingMs: 200 }, storage);
      alice = await ts.addUser("alice");
      bridge = await registerBridge(ts, alice, "laptop");
      const reader = StreamReader.open(ts, bridge);
      readers.push(reader);
      await reader.until((r) => r.pings >= 2, 10_000);
      expect(reader.events).toHaveLength(0);
      // Appended and committed, but never published here: as if another server instance wrote it.
      const { db, realtime } = ts.server.context;
      const unannounced = realtime.batch();
      const cursor = await db.transaction().execute((tx) => unannounced.append(tx, bridge.endpointId, testKind("test.elsewhere"), {}));
      const event = await reader.next("test.elsewhere", 0, 10_000);
      expect(event.cursor).toBe(cursor);
    });

    it("follows events another server instance on the same storage appends, and its revocations, on the idle tick", async () => {
      ts = await startTestServer({ streamPingMs: 200 }, storage);
      alice = await ts.addUser("alice");
      bridge = await registerBridge(ts, alice, "laptop");
      const other = await startServer(
        ServerConfigSchema.parse({
          port: 0,
          dataDir: ts.dataDir,
          databaseUrl: ts.databaseUrl,
          logLevel: "silent",
          maintenanceIntervalMs: 0,
        }),
      );
      try {
        const reader = StreamReader.open(ts, bridge);
        readers.push(reader);
        await reader.until((r) => r.pings >= 1, 10_000);
        const cursor = await other.context.realtime.appendNow(other.context.db, bridge.endpointId, testKind("test.elsewhere"), {
          from: "other",
        });
        expect((await reader.next("test.elsewhere", 0, 10_000)).cursor).toBe(cursor);
        // The other instance revokes the endpoint (its own streams end through endStreams; ours on the tick).
        await other.context.db
          .updateTable("runtime_endpoints")
          .set({ revoked_at: other.context.clock.iso() })
          .where("id", "=", bridge.endpointId)
          .execute();
        other.context.realtime.endStreams(bridge.endpointId);
        await reader.until((r) => r.ended, 10_000);
        expect(reader.events.map((e) => e.type)).toEqual(["test.elsewhere"]);
      } finally {
        await other.close();
      }
    });

    it("ends a stream whose endpoint was revoked by another instance, on the idle tick", async () => {
      ts = await startTestServer({ streamPingMs: 200 }, storage);
      alice = await ts.addUser("alice");
      bridge = await registerBridge(ts, alice, "laptop");
      const reader = StreamReader.open(ts, bridge);
      readers.push(reader);
      await reader.until((r) => r.pings >= 1, 10_000);
      const { db, clock } = ts.server.context;
      await db.updateTable("runtime_endpoints").set({ revoked_at: clock.iso() }).where("id", "=", bridge.endpointId).execute();
      await reader.until((r) => r.ended, 10_000);
      const again = await call(ts, bridge.deviceToken, "GET", `/local-realtime/stream?endpointId=${bridge.endpointId}`);
      expect(again.status).toBe(401);
    });

    it("recycles each stream after its lifetime plus jitter; reconnecting with the cursor loses and repeats nothing", async () => {
      const lifetimeMs = 1_000;
      const jitterMs = 200;
      ts = await startTestServer({ streamLifetimeMs: lifetimeMs, streamJitterMs: jitterMs }, storage);
      alice = await ts.addUser("alice");
      bridge = await registerBridge(ts, alice, "laptop");
      // Appends keep coming for about 4 s: across three or more recycles.
      const appending = appendMany(ts, bridge, "test.recycle", 160, 25);
      let done = false;
      void appending.then(() => {
        done = true;
      });
      const received: string[] = [];
      const durations: number[] = [];
      let cursor: string | undefined;
      let expected: string[] | undefined;
      while (!expected || received.length < expected.length) {
        const opened = performance.now();
        const reader = StreamReader.open(ts, bridge, cursor === undefined ? {} : { cursor });
        readers.push(reader);
        await reader.until((r) => r.ended, lifetimeMs + jitterMs + 5_000);
        durations.push(performance.now() - opened);
        expect(reader.status).toBe(200);
        received.push(...streamCursors(reader, "test.recycle"));
        cursor = reader.lastCursor ?? cursor;
        if (done) expected ??= await appending;
        // As bridges do: reconnect about 50 ms after the stream ends.
        await sleep(50);
      }
      expect(received).toEqual(expected);
      expect(durations.length).toBeGreaterThanOrEqual(3);
      for (const duration of durations) {
        expect(duration).toBeGreaterThanOrEqual(lifetimeMs - 50);
        // Generous slack: the machine is shared, but a stream that never recycles would time out above.
        expect(duration).toBeLessThan(lifetimeMs + jitterMs + 3_000);
      }
    }, 60_000);
  });
});
