/**
 * `npm run bench -- escalations`: the two latencies of an escalation, each beside a same-run baseline.
 *
 * 1. ask → pending on the owner's stream: a heartbeat ACTIONS run whose owner says `ask` for
 *    create_todo; the fake model answers at once with that call. Measured from the model request
 *    that answers with the call to the `escalation.requested` frame on the owner's held
 *    `GET /agent/stream`. Baseline: a human-mode `POST /agent/message` from a contact to the same
 *    owner, from the POST to its frame on the same stream (the stream path alone).
 * 2. continue → the tool runs: from `POST /escalations/{id}/resolve {decision: continue}` to the
 *    model request that carries the tool's result (the recorded call has run once and its outcome
 *    is stored before that request is made). Baseline: `POST /heartbeat/run` to its first model
 *    request (a run starting and reaching the model, without an escalation).
 */
import { ALL_SCOPES } from "@tandem/core";
import type { Kysely } from "kysely";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import type { Schema } from "../apps/server/src/db/schema";
import { createUser } from "../apps/server/src/people/users/users-service";
import { startFakeOpenAI } from "../apps/server/test/fakes/fake-openai";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { SseClient } from "./lib/sse-client";
import { startBenchTandem } from "./lib/tandem";

const ASK_TARGET_P50_MS = 10;
const CONTINUE_TARGET_P50_MS = 20;
const EVENT_TIMEOUT_MS = 10_000;

/** Frames of one held stream, handed to whoever waits for one matching. */
class StreamWaiter {
  readonly #waiting = new Set<{ test: (type: string, data: Record<string, unknown>) => boolean; resolve: (at: number) => void }>();

  constructor(stream: SseClient) {
    stream.onEvent((event) => {
      const at = performance.now();
      const data = JSON.parse(event.data) as { data?: Record<string, unknown> };
      for (const waiter of this.#waiting) {
        if (waiter.test(event.type, data.data ?? {})) {
          this.#waiting.delete(waiter);
          waiter.resolve(at);
        }
      }
    });
  }

  next(test: (type: string, data: Record<string, unknown>) => boolean): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching frame in ${EVENT_TIMEOUT_MS} ms`)), EVENT_TIMEOUT_MS);
      this.#waiting.add({
        test,
        resolve: (at) => {
          clearTimeout(timer);
          resolve(at);
        },
      });
    });
  }
}

async function json<T>(client: KeepAliveClient, method: string, path: string, body?: unknown, expected = 200): Promise<T> {
  return JSON.parse((await client.expect(expected, method, `/api/v1${path}`, body)).body) as T;
}

export async function run(): Promise<void> {
  const count = positiveIntFromEnv("BENCH_ESCALATIONS_COUNT", 200);
  const warmup = positiveIntFromEnv("BENCH_ESCALATIONS_WARMUP", 20);
  const requestTimes: number[] = [];
  const fake = await startFakeOpenAI({
    defaultReply: { text: "Done." },
    onRequest: () => {
      requestTimes.push(performance.now());
    },
  });
  const tandem = await startBenchTandem("bench", {
    modelProvider: "openai-compatible",
    modelBaseUrl: fake.baseUrl,
    model: "bench-model",
    maintenanceIntervalMs: 0,
    streamLifetimeMs: 3_600_000,
    streamJitterMs: 0,
  });
  const { url } = tandem.server;
  const { db } = tandem.server.context;
  const owner = new KeepAliveClient(url, tandem.authHeaders);
  const contactUser = await createUser(db, { username: "contact" });
  const contactKey = await createApiKey(db, { userId: contactUser.id, scopes: ALL_SCOPES, label: "benchmark" });
  const contact = new KeepAliveClient(url, { authorization: `Bearer ${contactKey.apiKey}` });
  let stream: SseClient | undefined;
  try {
    console.log(describeMachine());
    await json(owner, "POST", "/init");
    await json(owner, "POST", "/heartbeat/policy", { tier: "ACTIONS", toolPolicy: { create_todo: "ask" } });
    // The contact is connected, so its messages reach the owner's inbox (and stream) directly.
    await json(contact, "POST", "/network/request", { to: "bench" }, 201);
    const requests = await json<{ incoming: { requestId: number; type: string }[] }>(owner, "GET", "/network/requests");
    const request = requests.incoming.find((r) => r.type === "friend");
    if (!request) throw new Error("the owner sees no contact request");
    await json(owner, "POST", "/network/accept", { requestId: request.requestId, type: "friend", action: "accept" });
    stream = await SseClient.open(`${url}/api/v1/agent/stream`, tandem.authHeaders);
    const frames = new StreamWaiter(stream);

    const total = warmup + count;
    const ask: number[] = [];
    const streamBaseline: number[] = [];
    const escalationIds: string[] = [];
    process.stdout.write(`1. ask → pending on the stream, ${total} runs (${warmup} warm-up), alternating with the baseline…\n`);
    for (let i = 0; i < total; i++) {
      // The escalation: a heartbeat run into create_todo.
      fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: `Bench todo ${i}` } }] });
      const before = requestTimes.length;
      const pending = frames.next((type) => type === "escalation.requested");
      const ran = json<{ result: { status: string } }>(owner, "POST", "/heartbeat/run", {});
      const eventAt = await pending;
      const { result } = await ran;
      if (result.status !== "requires_action") throw new Error(`the run ended ${result.status}, not requires_action`);
      const askedAt = requestTimes[before] as number;
      const listed = await json<{ escalations: { id: string }[] }>(owner, "GET", "/escalations?status=pending&limit=1");
      escalationIds.push(listed.escalations[0]?.id as string);
      // The baseline: a contact's message to the same owner, on the same stream.
      const text = `note ${i}`;
      const delivered = frames.next((type, data) => type === "message" && JSON.stringify(data).includes(text));
      const sentAt = performance.now();
      await json(contact, "POST", "/agent/message", { to: "bench", message: text });
      const messageAt = await delivered;
      if (i >= warmup) {
        ask.push(eventAt - askedAt);
        streamBaseline.push(messageAt - sentAt);
      }
    }

    const resume: number[] = [];
    const runBaseline: number[] = [];
    process.stdout.write(`2. continue → the tool runs, ${total} resolves, alternating with the baseline…\n`);
    for (let i = 0; i < total; i++) {
      const id = escalationIds[i] as string;
      const before = requestTimes.length;
      const started = performance.now();
      await json(owner, "POST", `/escalations/${id}/resolve`, { decision: "continue" });
      await fake.until(() => requestTimes.length > before);
      const toolRanAt = requestTimes[before] as number;
      // The resumed run finishes before the next measurement.
      await fake.until(() => fake.inFlight === 0);
      await waitForRunsDone(tandem.server.context.db);
      // The baseline: a run that starts and reaches the model (text only, no escalation).
      const baselineBefore = requestTimes.length;
      const baselineStarted = performance.now();
      const ran = json(owner, "POST", "/heartbeat/run", {});
      await fake.until(() => requestTimes.length > baselineBefore);
      const reachedAt = requestTimes[baselineBefore] as number;
      await ran;
      if (i >= warmup) {
        resume.push(toolRanAt - started);
        runBaseline.push(reachedAt - baselineStarted);
      }
    }
    const todos = await db.selectFrom("escalations").select("tool_state").where("tool_state", "=", "done").execute();
    if (todos.length !== total) throw new Error(`expected ${total} recorded calls to have run once, found ${todos.length}`);

    const row = (label: string, stats: LatencyStats, target: string) => [
      label,
      formatMs(stats.p50Ms),
      formatMs(stats.p90Ms),
      formatMs(stats.p99Ms),
      target,
    ];
    const askStats = summarize(ask);
    const resumeStats = summarize(resume);
    console.log(
      formatTable(
        ["path", "p50", "p90", "p99", "target"],
        [
          row("ask → escalation.requested on the stream", askStats, `p50 ≤ ${ASK_TARGET_P50_MS} ms`),
          row("baseline: POST /agent/message → its frame", summarize(streamBaseline), ""),
          row("continue → the tool has run (next model request)", resumeStats, `p50 ≤ ${CONTINUE_TARGET_P50_MS} ms`),
          row("baseline: POST /heartbeat/run → first model request", summarize(runBaseline), ""),
        ],
      ),
    );
    console.log(
      `ask: ${askStats.p50Ms <= ASK_TARGET_P50_MS ? "met" : "MISSED"}; continue: ${resumeStats.p50Ms <= CONTINUE_TARGET_P50_MS ? "met" : "MISSED"} (${count} samples each)`,
    );
  } finally {
    stream?.close();
    owner.close();
    contact.close();
    await tandem.close();
    await fake.close();
  }
}

/** Waits until no paused run is being resumed (the resumed run has ended). */
async function waitForRunsDone(db: Kysely<Schema>): Promise<void> {
  for (;;) {
    const going = await db.selectFrom("paused_runs").select("id").where("status", "=", "resuming").executeTakeFirst();
    if (!going) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
