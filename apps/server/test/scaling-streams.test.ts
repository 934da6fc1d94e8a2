import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerConfigSchema } from "../src/config";
import { type RunningServer, startServer } from "../src/server";
import { agentPair, call, ok, openGrant, StreamReader } from "./delegation-fixture";
import { POSTGRES_URL, startTestServer, type TestServer, type TestUser } from "./harness";

/**
 * Streams across instances (issue 24): two real servers on one PostgreSQL schema and one Redis. An
 * event written through one reaches a stream held on the other through a Redis wake-up (well under
 * the polling fallback), and through the fallback alone when an instance has no working Redis.
 */
const REDIS_URL = process.env.TANDEM_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
/** The fallback's interval with Redis: an arrival well under it came through pub/sub. */
const POLL_MS = 5_000;
/** An arrival faster than this came through a wake-up, not the fallback (with room for a loaded CI machine). */
const WAKE_MS = 1_500;

/** One SSE frame's `data:` JSON, and when (performance.now()) it arrived. */
interface Frame {
  id: string;
  type: string;
  data: { cursor: string; type: string; data: Record<string, unknown> };
  at: number;
}

/** A minimal SSE reader for any stream; `open` resolves once the headers are in (the server follows the log by then). */
class Sse {
  readonly frames: Frame[] = [];
  readonly #controller = new AbortController();
  readonly #waiters = new Set<() => void>();
  ended = false;

  static async open(url: string, token: string, cursor = 0): Promise<Sse> {
    const sse = new Sse();
    const response = await fetch(`${url}${url.includes("?") ? "&" : "?"}cursor=${cursor}`, {
      headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
      signal: sse.#controller.signal,
    });
    expect(response.status).toBe(200);
    void sse.#read(response);
    return sse;
  }

  async #read(response: Response): Promise<void> {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let at = buffer.indexOf("\n\n"); at >= 0; at = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          if (frame.startsWith(":")) continue;
          const fields = Object.fromEntries(
            frame.split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
          );
          this.frames.push({ id: fields.id, type: fields.event, data: JSON.parse(fields.data as string), at: performance.now() } as Frame);
          for (const waiter of this.#waiters) waiter();
        }
      }
    } catch {
      // Closed by the test.
    } finally {
      this.ended = true;
      for (const waiter of this.#waiters) waiter();
    }
  }

  /** The first frame matching `match`, awaited. */
  next(match: (frame: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.frames.find(match);
        if (!found) return false;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`no matching frame in ${timeoutMs} ms; got ${this.frames.map((f) => f.type).join(", ")}`));
      }, timeoutMs);
      if (!check()) this.#waiters.add(check);
    });
  }

  close(): void {
    this.#controller.abort();
  }
}

/** `ts` as seen through another instance: the fixtures' helpers only use `fetch`. */
function through(server: RunningServer): TestServer {
  return { fetch: (pathAndQuery: string, init?: RequestInit) => fetch(`${server.url}${pathAndQuery}`, init) } as TestServer;
}

describe.skipIf(!POSTGRES_URL)("streams across instances (PostgreSQL + Redis)", () => {
  const prefix = `t-streams-${randomBytes(6).toString("hex")}`;
  let one: TestServer;
  let two: RunningServer;
  let redis: Redis;
  let serial = 0;

  /** Another instance on instance one's schema (and, unless told otherwise, its Redis). */
  const instance = (overrides: Record<string, unknown> = {}) =>
    startServer(
      ServerConfigSchema.parse({
        port: 0,
        dataDir: one.dataDir,
        databaseUrl: one.databaseUrl,
        logLevel: "silent",
        maintenanceIntervalMs: 0,
        redisUrl: REDIS_URL,
        redisPrefix: prefix,
        streamPollMs: POLL_MS,
        ...overrides,
      }),
    );

  beforeAll(async () => {
    one = await startTestServer({ redisUrl: REDIS_URL, redisPrefix: prefix, streamPollMs: POLL_MS }, "postgres");
    two = await instance();
    redis = new Redis(REDIS_URL);
    await Promise.all([one.server.context.realtime.wakeups?.ready(), two.context.realtime.wakeups?.ready()]);
  });
  afterAll(async () => {
    redis?.disconnect();
    await two?.close();
    await one?.stop();
  });

  async function connectedPair(): Promise<[TestUser, TestUser]> {
    const n = ++serial;
    const [alice, bob] = [await one.addUser(`alice${n}`), await one.addUser(`bob${n}`)];
    await ok(one, alice.apiKey, "POST", "/network/request", { to: bob.username });
    await ok(one, bob.apiKey, "POST", "/network/request", { to: alice.username });
    return [alice, bob];
  }

  /** POST /agent/message (human mode) through `via`; answers when it was sent. */
  async function post(via: TestServer, from: TestUser, to: TestUser, message: string): Promise<number> {
    const sentAt = performance.now();
    const answer = await call(via, from.apiKey, "POST", "/agent/message", { to: to.username, message, mode: "human" });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return sentAt;
  }

  const contentOf = (frame: Frame) => (frame.data.data.message as { content?: string } | undefined)?.content;

  it("a message posted on one instance reaches the recipient's /agent/stream on the other through Redis, well under the fallback", async () => {
    const [alice, bob] = await connectedPair();
    const onTwo = await Sse.open(`${two.apiUrl}/agent/stream`, alice.apiKey);
    const onOne = await Sse.open(`${one.server.apiUrl}/agent/stream`, alice.apiKey);
    try {
      const sentAt = await post(one, bob, alice, "across instances");
      const [there, here] = await Promise.all([
        onTwo.next((f) => contentOf(f) === "across instances", POLL_MS - 500),
        onOne.next((f) => contentOf(f) === "across instances"),
      ]);
      expect(there.at - sentAt).toBeLessThan(WAKE_MS);
      // The same event, the same wire, wherever the stream is held.
      expect({ ...there, at: 0 }).toEqual({ ...here, at: 0 });
      expect(Object.keys(there.data)).toEqual(["cursor", "type", "createdAt", "data"]);

      // And back: posted through two, heard live on one.
      const bobOnOne = await Sse.open(`${one.server.apiUrl}/agent/stream`, bob.apiKey);
      try {
        const backAt = await post(through(two), alice, bob, "and back");
        const back = await bobOnOne.next((f) => contentOf(f) === "and back", POLL_MS - 500);
        expect(back.at - backAt).toBeLessThan(WAKE_MS);
      } finally {
        bobOnOne.close();
      }
    } finally {
      onTwo.close();
      onOne.close();
    }
  });

  it("a reconnect with a cursor, on either instance, replays exactly what came after it", async () => {
    const [alice, bob] = await connectedPair();
    await post(one, bob, alice, "first");
    await post(through(two), bob, alice, "second");
    await post(one, bob, alice, "third");
    const all = await Sse.open(`${two.apiUrl}/agent/stream`, alice.apiKey);
    const third = await all.next((f) => contentOf(f) === "third");
    all.close();
    expect(all.frames.map(contentOf)).toEqual(["first", "second", "third"]);
    const afterFirst = all.frames[0]?.id as string;
    const resumed = await Sse.open(`${one.server.apiUrl}/agent/stream`, alice.apiKey, Number(afterFirst));
    try {
      await resumed.next((f) => f.id === third.id);
      expect(resumed.frames.map(contentOf)).toEqual(["second", "third"]);
    } finally {
      resumed.close();
    }
  });

  it("a bridge event written on one instance reaches /local-realtime/stream on the other, and dispatches the delivery", async () => {
    const pair = await agentPair(one, { alice: `ann${++serial}`, bob: `ben${serial}` });
    const grant = await openGrant(one, pair.aliceBridge.deviceToken, pair.bob);
    const stream = StreamReader.open(through(two), pair.bobBridge);
    try {
      // Held on two (registered there) before anything is sent through one.
      await expect.poll(() => two.context.realtime.openStreamCount(pair.bobBridge.endpointId)).toBe(1);
      const sentAt = performance.now();
      const sent = await ok<{ deliveryId: string; messageId: string }>(one, pair.aliceBridge.deviceToken, "POST", "/local-agent/messages", {
        communicationSessionId: grant.commSessionId,
        clientMessageId: "across-1",
        kind: "text",
        payload: { text: "from instance one" },
      });
      const dispatch = await stream.next("message.dispatch", 0, POLL_MS - 500);
      expect(performance.now() - sentAt).toBeLessThan(WAKE_MS);
      expect(dispatch).toMatchObject({ endpointId: pair.bobBridge.endpointId, data: { deliveryId: sent.deliveryId } });
      // Written to the stream on two: the delivery is dispatched, as instance one reports it.
      await expect
        .poll(
          async () =>
            (await ok<{ delivery: { status: string } }>(one, pair.bobBridge.deviceToken, "GET", `/local-agent/messages/${sent.messageId}`))
              .delivery.status,
        )
        .toBe("dispatched");
    } finally {
      await stream.close();
    }
  });

  it("an instance whose Redis is unreachable still delivers, through the database fallback", async () => {
    // Port 1: nothing listens, so this instance never hears (nor sends) a wake-up.
    const deaf = await instance({ redisUrl: "redis://127.0.0.1:1", streamPollMs: 200 });
    try {
      const [alice, bob] = await connectedPair();
      const stream = await Sse.open(`${deaf.apiUrl}/agent/stream`, alice.apiKey);
      try {
        await post(one, bob, alice, "heard by polling");
        await stream.next((f) => contentOf(f) === "heard by polling", 5_000);
        // What it writes itself (no wake-up sent) is stored and announced to its own streams as ever.
        await post(through(deaf), bob, alice, "written without redis");
        await stream.next((f) => contentOf(f) === "written without redis", 5_000);
      } finally {
        stream.close();
      }
    } finally {
      await deaf.close();
    }
  });

  it("after its Redis connection is killed, an instance subscribes again by itself and wakes its streams", async () => {
    const channel = `${prefix}:signal:streams:wake`;
    const subscribers = async () => Number(((await redis.pubsub("NUMSUB", channel)) as [string, number])[1]);
    expect(await subscribers()).toBe(2);
    // Only this test's connections: other test files share this Redis.
    const clients = String(await redis.client("LIST"))
      .split("\n")
      .filter((line) => line.includes(` name=${prefix}:subscriber `));
    expect(clients).toHaveLength(2);
    const [alice, bob] = await connectedPair();
    const stream = await Sse.open(`${two.apiUrl}/agent/stream`, alice.apiKey);
    try {
      for (const line of clients) await redis.client("KILL", "ID", (/\bid=(\d+)/.exec(line) as RegExpExecArray)[1] as string);
      // Written while nobody listens: the resync on resubscribing (or the fallback) brings it.
      await post(one, bob, alice, "during the outage");
      await stream.next((f) => contentOf(f) === "during the outage", POLL_MS + 2_000);
      await expect.poll(subscribers, { timeout: 5_000 }).toBe(2);
      const sentAt = await post(one, bob, alice, "after the outage");
      const frame = await stream.next((f) => contentOf(f) === "after the outage", POLL_MS - 500);
      expect(frame.at - sentAt).toBeLessThan(WAKE_MS);
    } finally {
      stream.close();
    }
  });
});
