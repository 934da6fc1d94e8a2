/**
 * `npm run bench -- realtime`: the delegation layer's realtime path.
 *
 * 1. A message from alice's bridge (`POST /local-agent/messages`) to the `message.dispatch` event
 *    on bob's bridge's stream, one message at a time over loopback, beside a bare `node:http` SSE
 *    server that pushes a frame to a held connection when it receives a POST, measured the same way.
 * 2. 1,000 realtime streams open at once against one server: its RSS before and after, per
 *    stream, and whether every stream receives an event.
 */
import { ALL_SCOPES } from "@tandem/core";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import type { BridgeEventType } from "../apps/server/src/delegation/realtime/event-log";
import { createUser } from "../apps/server/src/people/users/users-service";
import { type BareSseServer, startBareSse } from "./lib/bare-sse";
import { startChild } from "./lib/child";
import { describeLoad, positiveIntFromEnv } from "./lib/env";
import { formatMs, type HttpAnswer, KeepAliveClient, type LatencyStats, summarize } from "./lib/latency";
import { formatDeltaMiB, formatMiB, type MemoryReading, settledMemory } from "./lib/memory";
import type { AwaitEventAnswer, OpenStreamsAnswer } from "./lib/realtime-clients-child";
import { describeMachine, formatTable } from "./lib/report";
import { SseClient } from "./lib/sse-client";
import { type BenchTandem, startBenchTandem } from "./lib/tandem";

const TARGET_P50_MS = 5;
/** Far longer than a run: a stream the server recycled mid-measurement would measure the reconnect. */
const LONG_STREAMS = { streamLifetimeMs: 3_600_000, streamJitterMs: 0 };
const EVENT_TIMEOUT_MS = 10_000;

/** A 2xx JSON answer, or the benchmark stops: measuring refusals measures nothing. */
async function wire<T = Record<string, unknown>>(client: KeepAliveClient, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await client.request(method, `/api/v1${path}`, body);
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  }
  return JSON.parse(answer.body) as T;
}

interface BenchBridge {
  endpointId: string;
  deviceToken: string;
  sessionHandle: string;
  client: KeepAliveClient;
}

/** What a bridge does first: register with its owner's key, then (with its device token) a session and the default route. */
async function registerBridge(baseUrl: string, owner: KeepAliveClient, deviceId: string): Promise<BenchBridge> {
  const registered = await wire<{ endpoint: { endpointId: string }; deviceToken: string }>(owner, "POST", "/local-agent/endpoints", {
    runtime: "claude-code",
    deviceId,
    bridgeVersion: "1.0.0",
    adapterVersion: "1.0.0",
    capabilities: ["text", "task_invite"],
  });
  const client = new KeepAliveClient(baseUrl, { authorization: `Bearer ${registered.deviceToken}` });
  const { endpointId } = registered.endpoint;
  const session = await wire<{ sessionHandle: string }>(client, "POST", "/local-agent/sessions", {
    endpointId,
    label: deviceId,
    state: "idle",
    deliveryMode: "managed_stream",
    capabilities: ["text", "task_invite"],
    allowInbound: true,
    allowMidTurnSteer: false,
  });
  await wire(client, "PUT", "/local-agent/default-route", { endpointId, sessionHandle: session.sessionHandle });
  return { endpointId, deviceToken: registered.deviceToken, sessionHandle: session.sessionHandle, client };
}

/** One target of part 1: sends a message and resolves when its event has arrived on the held stream. */
interface MessageTarget {
  readonly label: string;
  send(clientMessageId: string): Promise<{ eventMs: number; answerMs: number }>;
  close(): Promise<void>;
}

/**
 * Times one message: from sending the POST to the frame naming its clientMessageId on the
 * stream (the figure), and to the POST's answer (shown beside it). Waits for both.
 */
function messageTimer(stream: SseClient, clientMessageIdOf: (data: string) => string | undefined) {
  const waiting = new Map<string, (at: number) => void>();
  stream.onEvent((event) => {
    if (event.type !== "message.dispatch") return;
    const id = clientMessageIdOf(event.data);
    if (id !== undefined) waiting.get(id)?.(performance.now());
  });
  return async (clientMessageId: string, post: () => Promise<HttpAnswer>) => {
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<number>((resolve, reject) => {
      waiting.set(clientMessageId, resolve);
      timer = setTimeout(() => reject(new Error(`no event for ${clientMessageId} in ${EVENT_TIMEOUT_MS} ms`)), EVENT_TIMEOUT_MS);
    });
    const started = performance.now();
    const answered = post().then((answer) => {
      if (answer.status !== 201) throw new Error(`message POST answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      return performance.now();
    });
    try {
      const [eventAt, answerAt] = await Promise.all([arrived, answered]);
      return { eventMs: eventAt - started, answerMs: answerAt - started };
    } finally {
      clearTimeout(timer);
      waiting.delete(clientMessageId);
    }
  };
}

/** Tandem: handshake, two bridges, an accepted grant, bob's bridge listening; alice's bridge sends. */
async function tandemTarget(tandem: BenchTandem): Promise<MessageTarget> {
  const { url } = tandem.server;
  const { db } = tandem.server.context;
  const bobUser = await createUser(db, { username: "bob" });
  const bobKey = await createApiKey(db, { userId: bobUser.id, scopes: ALL_SCOPES, label: "benchmark" });
  const alice = new KeepAliveClient(url, tandem.authHeaders);
  const bob = new KeepAliveClient(url, { authorization: `Bearer ${bobKey.apiKey}` });

  await wire(alice, "POST", "/network/request", { to: "bob_coo" });
  const requests = await wire<{ incoming: { requestId: number | string; type: string }[] }>(bob, "GET", "/network/requests");
  const request = requests.incoming.find((r) => r.type === "agent");
  if (!request) throw new Error("bob sees no agent request from alice");
  await wire(bob, "POST", "/network/accept", {
    requestId: request.requestId,
    type: "agent",
    action: "accept",
    permissions: { notesAccess: { scope: "all", access: "read" } },
  });
  const aliceBridge = await registerBridge(url, alice, "alice-laptop");
  const bobBridge = await registerBridge(url, bob, "bob-desktop");
  const pending = await wire<{ communicationSessionId: string }>(aliceBridge.client, "POST", "/local-agent/grants", {
    target: { kind: "person_default_runtime", principalId: String(bobUser.id) },
    requestedTtlMinutes: 30,
  });
  const grant = await wire<{ communicationSessionId: string; status: string }>(
    bob,
    "POST",
    `/local-agent/grants/${pending.communicationSessionId}/accept`,
  );
  if (grant.status !== "active") throw new Error(`the grant is ${grant.status}, not active`);

  // From the start of the log: the grant's own events replay first, then the messages follow live.
  const stream = await SseClient.open(
    `${tandem.server.apiUrl}/local-realtime/stream?${new URLSearchParams({ endpointId: bobBridge.endpointId })}`,
    { authorization: `Bearer ${bobBridge.deviceToken}` },
  );
  const time = messageTimer(stream, (data) => {
    const event = JSON.parse(data) as { data: { envelope?: { clientMessageId?: string } } };
    return event.data.envelope?.clientMessageId;
  });
  return {
    label: "Tandem: POST /local-agent/messages → message.dispatch on the stream",
    send: (clientMessageId) =>
      time(clientMessageId, () =>
        aliceBridge.client.request("POST", "/api/v1/local-agent/messages", {
          communicationSessionId: grant.communicationSessionId,
          clientMessageId,
          kind: "text",
          payload: { text: `benchmark message ${clientMessageId}` },
        }),
      ),
    close: async () => {
      stream.close();
      for (const client of [alice, bob, aliceBridge.client, bobBridge.client]) client.close();
    },
  };
}

async function bareTarget(bare: BareSseServer): Promise<MessageTarget> {
  const stream = await SseClient.open(`${bare.url}/stream`);
  const client = new KeepAliveClient(bare.url);
  const time = messageTimer(stream, (data) => {
    const event = JSON.parse(data) as { data: { envelope?: { clientMessageId?: string } } };
    return event.data.envelope?.clientMessageId;
  });
  return {
    label: "bare node:http SSE: POST → frame on the held stream",
    send: (clientMessageId) =>
      time(clientMessageId, () =>
        client.request("POST", "/messages", { clientMessageId, kind: "text", payload: { text: `benchmark message ${clientMessageId}` } }),
      ),
    close: async () => {
      stream.close();
      client.close();
    },
  };
}

interface LatencyResult {
  label: string;
  event: LatencyStats;
  answer: LatencyStats;
}

/** Warm-up on each target, then the measured messages in alternating rounds, so a change in load hits both. */
async function measureMessages(targets: readonly MessageTarget[], settings: { warmup: number; count: number; rounds: number }) {
  const samples = targets.map(() => ({ event: [] as number[], answer: [] as number[] }));
  let sequence = 0;
  for (const target of targets) for (let i = 0; i < settings.warmup; i++) await target.send(`warmup-${sequence++}`);
  const perRound = Math.max(1, Math.floor(settings.count / settings.rounds));
  for (let round = 0; round < settings.rounds; round++) {
    for (const [index, target] of targets.entries()) {
      for (let i = 0; i < perRound; i++) {
        const { eventMs, answerMs } = await target.send(`m-${sequence++}`);
        samples[index]?.event.push(eventMs);
        samples[index]?.answer.push(answerMs);
      }
    }
  }
  return targets.map((target, index): LatencyResult => {
    const own = samples[index] ?? { event: [], answer: [] };
    return { label: target.label, event: summarize(own.event), answer: summarize(own.answer) };
  });
}

async function partOne(settings: { warmup: number; count: number; rounds: number }): Promise<void> {
  const tandem = await startBenchTandem("alice", LONG_STREAMS);
  const bare = await startBareSse();
  const targets: MessageTarget[] = [];
  try {
    targets.push(await tandemTarget(tandem));
    targets.push(await bareTarget(bare));
    const results = await measureMessages(targets, settings);
    console.log(
      `\n1. message → event on the recipient's stream: ${settings.warmup} warm-up + ${results[0]?.event.count} measured messages per target, one at a time, in ${settings.rounds} alternating rounds`,
    );
    console.log(
      formatTable(
        ["target", "event p50", "event p90", "event p99", "event mean", "POST answered p50", "target p50", "verdict"],
        results.map((result, index) => [
          result.label,
          formatMs(result.event.p50Ms),
          formatMs(result.event.p90Ms),
          formatMs(result.event.p99Ms),
          formatMs(result.event.meanMs),
          formatMs(result.answer.p50Ms),
          index === 0 ? `≤ ${TARGET_P50_MS} ms` : "-",
          index === 0 ? (result.event.p50Ms <= TARGET_P50_MS ? "PASS" : "BELOW") : "(baseline)",
        ]),
      ),
    );
    const [ours, baseline] = results;
    if (ours && baseline) {
      console.log(
        `Tandem adds ${formatMs(ours.event.p50Ms - baseline.event.p50Ms)} ms at p50 over the bare push (authentication, validation, the grant and route checks, one SQLite transaction for the message and its event, a log read for the stream)`,
      );
    }
    console.log(
      "all times in ms, client-measured from sending the POST (event: its frame parsed on the stream; POST answered: its 201 read)",
    );
  } finally {
    for (const target of targets) await target.close();
    await bare.close();
    await tandem.close();
  }
}

interface ManyStreamsReport {
  idle: MemoryReading;
  open: MemoryReading;
  after: MemoryReading;
  opened: OpenStreamsAnswer;
  serverOpen: number;
  event: AwaitEventAnswer;
  appendMs: number;
}

async function partTwo(streams: number): Promise<ManyStreamsReport> {
  const tandem = await startBenchTandem("many", LONG_STREAMS);
  const owner = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
  const child = await startChild(new URL("./lib/realtime-clients-child.ts", import.meta.url));
  try {
    const bridges: { endpointId: string; deviceToken: string }[] = [];
    const started = performance.now();
    for (let i = 0; i < streams; i++) {
      const registered = await wire<{ endpoint: { endpointId: string }; deviceToken: string }>(owner, "POST", "/local-agent/endpoints", {
        runtime: i % 2 === 0 ? "claude-code" : "codex",
        deviceId: `bench-device-${i}`,
        bridgeVersion: "1.0.0",
        adapterVersion: "1.0.0",
        capabilities: ["text"],
      });
      bridges.push({ endpointId: registered.endpoint.endpointId, deviceToken: registered.deviceToken });
    }
    console.log(`\nregistered ${streams.toLocaleString("en")} endpoints in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const idle = await settledMemory();
    const opened = await child.call<OpenStreamsAnswer>("open", { apiUrl: tandem.server.apiUrl, bridges, concurrency: 100 });
    if (opened.failed > 0) console.warn(`warning: ${opened.failed} streams failed to open: ${opened.firstError}`);
    const open = await settledMemory();
    const serverOpen = tandem.server.context.realtime.openStreamCount();
    // One event to every endpoint, in one transaction, announced at once: a broadcast.
    await child.call("arm", { type: "bench.broadcast", timeoutMs: 30_000 });
    const appendStarted = performance.now();
    const { db, realtime } = tandem.server.context;
    const batch = realtime.batch();
    await db.transaction().execute(async (tx) => {
      for (const bridge of bridges) await batch.append(tx, bridge.endpointId, "bench.broadcast" as BridgeEventType, { n: 1 });
    });
    const appendMs = performance.now() - appendStarted;
    batch.publish();
    const event = await child.call<AwaitEventAnswer>("collect");
    const after = await settledMemory();
    return { idle, open, after, opened, serverOpen, event, appendMs };
  } finally {
    await child.call("close").catch(() => {});
    await child.close();
    owner.close();
    await tandem.close();
  }
}

function printManyStreams(streams: number, report: ManyStreamsReport): void {
  const { idle, open, after, opened, serverOpen, event, appendMs } = report;
  console.log(
    `2. ${streams.toLocaleString("en")} streams open at once (clients in a child process, ${opened.opened} opened in ${(opened.ms / 1000).toFixed(1)} s, 100 connecting at a time; the server counts ${serverOpen} open)`,
  );
  const row = (label: string, reading: MemoryReading) => [
    label,
    formatMiB(reading.rss),
    formatDeltaMiB(reading.rss - idle.rss),
    formatMiB(reading.heapUsed),
    formatDeltaMiB(reading.heapUsed - idle.heapUsed),
  ];
  console.log(
    formatTable(
      ["server process", "rss", "Δ rss", "heap used", "Δ heap"],
      [
        row("idle (endpoints registered, no stream)", idle),
        row(`${opened.opened} streams open`, open),
        row("after one event to each", after),
      ],
    ),
  );
  const perStream = opened.opened > 0 ? (open.rss - idle.rss) / opened.opened : Number.NaN;
  const heapPerStream = opened.opened > 0 ? (open.heapUsed - idle.heapUsed) / opened.opened : Number.NaN;
  console.log(
    `per stream: ${(perStream / 1024).toFixed(1)} KiB rss, ${(heapPerStream / 1024).toFixed(1)} KiB heap (readings after a forced GC; the client child's rss: ${formatMiB(opened.childRss)})`,
  );
  const all = event.received === streams && opened.opened === streams;
  console.log(
    `one event appended to each endpoint (one transaction: ${formatMs(appendMs)} ms), received on ${event.received} of ${streams} streams ` +
      `${formatMs(event.ms)} ms after arming (${event.ended} ended meanwhile): ${all ? "PASS" : "FAIL"}`,
  );
  if (!all) process.exitCode = 1;
}

export async function run(): Promise<void> {
  const settings = {
    warmup: positiveIntFromEnv("BENCH_REALTIME_WARMUP", 50),
    count: positiveIntFromEnv("BENCH_REALTIME_MESSAGES", 500),
    rounds: positiveIntFromEnv("BENCH_REALTIME_ROUNDS", 10),
  };
  const streams = positiveIntFromEnv("BENCH_REALTIME_STREAMS", 1_000);
  console.log(describeMachine());
  console.log(describeLoad());
  await partOne(settings);
  printManyStreams(streams, await partTwo(streams));
}
