/**
 * `npm run bench -- webhooks`: the webhook outbox.
 *
 * 1. Latency: a message posted into a group (`POST /conversations/{id}/messages`) to its
 *    `message.received` delivery verified by a local Standard Webhooks receiver, one at a time,
 *    beside two floors measured the same way in the same run: the message POST's own answer, and a
 *    bare POST of the same size straight to the receiver.
 * 2. Drain: 10,000 deliveries queued at once (in event transactions of 500), the receiver failing
 *    the first try of every other one; the time until every one has succeeded, with none lost and
 *    none doubled, beside the same 10,000 bodies POSTed straight to the receiver, 50 at a time.
 *    Retries wait 50/100/200 ms here (the contract's first wait is 5 s).
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ALL_SCOPES } from "@tandem/core";
import { Webhook } from "standardwebhooks";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import { createUser } from "../apps/server/src/people/users/users-service";
import { enqueueWebhookEvent } from "../apps/server/src/webhooks/webhook-outbox";
import { describeLoad, positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { startBenchTandem } from "./lib/tandem";

const TARGET_P50_MS = 50;
const SAMPLES = positiveIntFromEnv("BENCH_WEBHOOK_SAMPLES", 200);
const WARMUP = 20;
const DRAIN = positiveIntFromEnv("BENCH_WEBHOOK_DRAIN", 10_000);
const DRAIN_BATCH = 500;
const BARE_CONCURRENCY = 50;

/** A Standard Webhooks receiver: verifies each delivery, fails the first try of every other id when told. */
class Receiver {
  readonly #server: http.Server;
  #verifier: Webhook | undefined;
  failHalf = false;
  readonly tries = new Map<string, number>();
  readonly successes = new Map<string, number>();
  #firstSeen = 0;
  rejected = 0;
  #next: ((id: string) => void) | undefined;
  #drained: { count: number; resolve: () => void } | undefined;

  constructor() {
    this.#server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const id = String(req.headers["webhook-id"] ?? "");
        if (this.#verifier) {
          try {
            this.#verifier.verify(body, req.headers as Record<string, string>);
          } catch {
            this.rejected++;
            res.writeHead(400).end();
            return;
          }
        }
        const tries = (this.tries.get(id) ?? 0) + 1;
        this.tries.set(id, tries);
        if (tries === 1) this.#firstSeen++;
        if (this.failHalf && tries === 1 && this.#firstSeen % 2 === 0) {
          res.writeHead(500).end();
          return;
        }
        const successes = (this.successes.get(id) ?? 0) + 1;
        this.successes.set(id, successes);
        res.writeHead(204).end();
        if (successes === 1 && this.#next) {
          const next = this.#next;
          this.#next = undefined;
          next(id);
        }
        if (this.#drained && this.successes.size >= this.#drained.count) this.#drained.resolve();
      });
    });
  }

  async start(): Promise<string> {
    this.#server.listen(0, "127.0.0.1");
    await once(this.#server, "listening");
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  trust(secret: string | undefined): void {
    this.#verifier = secret ? new Webhook(secret) : undefined;
  }

  reset(): void {
    this.tries.clear();
    this.successes.clear();
    this.#firstSeen = 0;
    this.rejected = 0;
  }

  /** Resolves with the id of the next delivery that succeeds for the first time. */
  nextSuccess(): Promise<string> {
    return new Promise((resolve) => {
      this.#next = resolve;
    });
  }

  drained(count: number): Promise<void> {
    if (this.successes.size >= count) return Promise.resolve();
    return new Promise((resolve) => {
      this.#drained = { count, resolve };
    });
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

async function wire<T>(client: KeepAliveClient, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await client.request(method, `/api/v1${path}`, body);
  if (answer.status < 200 || answer.status >= 300)
    throw new Error(`${method} ${path} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
  return JSON.parse(answer.body) as T;
}

/** A POST of `body` straight to the receiver, unsigned: what delivering costs without Tandem. */
function barePost(url: string, agent: http.Agent, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "webhook-id": `bare_${Math.random()}` },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve());
    });
    req.on("error", reject);
    req.end(body);
  });
}

const row = (label: string, stats: LatencyStats) => [
  label,
  formatMs(stats.p50Ms),
  formatMs(stats.p90Ms),
  formatMs(stats.p99Ms),
  String(stats.count),
];

export async function run(): Promise<void> {
  console.log(describeMachine());
  console.log(describeLoad());
  const receiver = new Receiver();
  const hookUrl = await receiver.start();
  const tandem = await startBenchTandem("alice", {
    allowPrivateWebhooks: "1",
    webhookRetryDelaysMs: "50,100,200,400,800",
    webhookPollMs: 50,
  });
  try {
    const { url, context } = tandem.server;
    const { db, clock } = context;
    const bobUser = await createUser(db, { username: "bob" });
    const bobKey = await createApiKey(db, { userId: bobUser.id, scopes: ALL_SCOPES, label: "benchmark" });
    const alice = new KeepAliveClient(url, tandem.authHeaders);
    const bob = new KeepAliveClient(url, { authorization: `Bearer ${bobKey.apiKey}` });
    await wire(alice, "POST", "/network/request", { to: "bob" });
    await wire(bob, "POST", "/network/request", { to: "alice" });
    const group = await wire<{ group: { id: number } }>(alice, "POST", "/groups", { name: "Bench", members: ["bob"] });
    const hook = await wire<{ webhook: { id: string }; secret: string }>(bob, "POST", "/webhooks", {
      url: hookUrl,
      events: ["message.received"],
    });
    receiver.trust(hook.secret);

    // 1. event → delivery, one at a time.
    const toDelivery: number[] = [];
    const postAnswer: number[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const arrived = receiver.nextSuccess();
      const started = performance.now();
      await wire(alice, "POST", `/conversations/${group.group.id}/messages`, { content: `status update ${i}` });
      const answered = performance.now();
      await arrived;
      const delivered = performance.now();
      if (i >= WARMUP) {
        toDelivery.push(delivered - started);
        postAnswer.push(answered - started);
      }
    }
    const sampleBody = JSON.stringify({ type: "message.received", timestamp: clock.iso(), data: { conversationId: 1, summary: "x" } });
    const bareAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    receiver.trust(undefined);
    const bare: number[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const started = performance.now();
      await barePost(hookUrl, bareAgent, sampleBody);
      if (i >= WARMUP) bare.push(performance.now() - started);
    }
    bareAgent.destroy();
    const delivery = summarize(toDelivery);
    console.log(`\n1. message posted → message.received verified by the receiver (${SAMPLES} samples, one at a time)`);
    console.log(
      formatTable(
        ["", "p50 ms", "p90 ms", "p99 ms", "n"],
        [
          row("event → delivery received", delivery),
          row("floor: the message POST's answer", summarize(postAnswer)),
          row("floor: a bare POST to the receiver", summarize(bare)),
        ],
      ),
    );
    console.log(`target p50 ≤ ${TARGET_P50_MS} ms: ${delivery.p50Ms <= TARGET_P50_MS ? "met" : "NOT met"}`);

    // 2. Drain 10,000 while the receiver fails half of the first tries.
    receiver.reset();
    receiver.trust(hook.secret);
    receiver.failHalf = true;
    const queuedAt = performance.now();
    for (let start = 0; start < DRAIN; start += DRAIN_BATCH) {
      const events = context.realtime.batch();
      await db.transaction().execute(async (tx) => {
        for (let n = start; n < Math.min(DRAIN, start + DRAIN_BATCH); n++) {
          await enqueueWebhookEvent(tx, events, clock, Number(bobUser.id), "message.received", {
            conversationId: group.group.id,
            messageId: n,
            fromUserId: 1,
            senderType: "human",
            summary: `bulk ${n}`,
          });
        }
      });
      events.publish();
    }
    const queuedMs = performance.now() - queuedAt;
    await receiver.drained(DRAIN);
    const drainMs = performance.now() - queuedAt;
    const doubled = [...receiver.successes.values()].filter((count) => count > 1).length;
    const failedFirst = [...receiver.tries.values()].filter((count) => count > 1).length;
    const succeeded = receiver.successes.size;
    // The receiver has answered the last one; the outbox records it a moment later.
    let unsettled = -1;
    for (let waited = 0; waited < 100 && unsettled !== 0; waited++) {
      if (waited > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      unsettled = (await db.selectFrom("webhook_deliveries").select("id").where("status", "!=", "succeeded").execute()).length;
    }

    receiver.failHalf = false;
    receiver.trust(undefined);
    const bareAgents = new http.Agent({ keepAlive: true, maxSockets: BARE_CONCURRENCY });
    const bareStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: BARE_CONCURRENCY }, async () => {
        while (next < DRAIN) {
          next++;
          await barePost(hookUrl, bareAgents, sampleBody);
        }
      }),
    );
    const bareDrainMs = performance.now() - bareStarted;
    bareAgents.destroy();
    console.log(`\n2. ${DRAIN.toLocaleString("en-US")} deliveries drained while the receiver fails the first try of half of them`);
    console.log(
      formatTable(
        ["", "seconds", "per second"],
        [
          ["Tandem: queued (event transactions of 500)", (queuedMs / 1000).toFixed(2), ""],
          ["Tandem: queued → all succeeded", (drainMs / 1000).toFixed(2), Math.round(DRAIN / (drainMs / 1000)).toLocaleString("en-US")],
          [
            "floor: bare POSTs, 50 at a time, none failing",
            (bareDrainMs / 1000).toFixed(2),
            Math.round(DRAIN / (bareDrainMs / 1000)).toLocaleString("en-US"),
          ],
        ],
      ),
    );
    console.log(
      `succeeded ${succeeded.toLocaleString("en-US")} of ${DRAIN.toLocaleString("en-US")}; retried after a 500: ${failedFirst.toLocaleString("en-US")}; lost: ${DRAIN - succeeded}; doubled: ${doubled}; not settled in the outbox: ${unsettled}; signatures rejected: ${receiver.rejected}`,
    );
  } finally {
    await tandem.close();
    await receiver.close();
  }
}
