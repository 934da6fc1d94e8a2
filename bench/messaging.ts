/**
 * `npm run bench -- messaging`: `POST /agent/message`.
 * 1. Human mode (fire-and-forget into the pair's conversation, with a `message` event for the
 *    recipient): p50 target ≤ 5 ms, beside `/healthz` measured the same way in the same run.
 * 2. Agent RPC (`<username>_coo`) with the `local` provider over a seeded 10,000-note workspace,
 *    under a contact's grant (notes read, every folder): p50 target ≤ 150 ms, beside the same
 *    question asked by the owner through `POST /chat` (complete answer) and the search alone.
 */
import http from "node:http";
import { ALL_SCOPES } from "@tandem/core";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import { createUser } from "../apps/server/src/people/users/users-service";
import { positiveIntFromEnv, stringFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, summarize } from "./lib/latency";
import { DEFAULT_SEED_OPTIONS } from "./lib/notes-seed";
import { describeMachine, formatTable } from "./lib/report";
import { startSeededTandem } from "./lib/seeded-tandem";
import { type BenchTandem, startBenchTandem } from "./lib/tandem";

const QUESTION = "What do my notes say about the budget review?";
export const HEADER = ["measurement (sequential, one keep-alive connection)", "n", "p50", "p90", "p99", "mean", "target p50", "verdict"];

export function row(name: string, stats: LatencyStats, target?: number): string[] {
  return [
    name,
    String(stats.count),
    formatMs(stats.p50Ms),
    formatMs(stats.p90Ms),
    formatMs(stats.p99Ms),
    formatMs(stats.meanMs),
    target === undefined ? "(baseline)" : `≤ ${target} ms`,
    target === undefined ? "" : stats.p50Ms <= target ? "PASS" : "BELOW",
  ];
}

/** Times `count` sequential runs of each operation, interleaved, after `warmup` rounds. */
export async function interleaved(count: number, warmup: number, operations: readonly (() => Promise<unknown>)[]): Promise<LatencyStats[]> {
  const samples = operations.map(() => [] as number[]);
  for (let i = 0; i < warmup + count; i++) {
    for (const [index, operation] of operations.entries()) {
      const started = performance.now();
      await operation();
      if (i >= warmup) samples[index]?.push(performance.now() - started);
    }
  }
  return samples.map(summarize);
}

/** One POST with its own headers over a keep-alive agent; anything but a 200 stops the benchmark. */
function postJson(agent: http.Agent, url: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          response.statusCode === 200 ? resolve() : reject(new Error(`${url} answered ${response.statusCode}: ${text}`)),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
}

/** A second person with a key, made contacts (both rows) with the benchmark user and given `permissions` by them. */
export async function addPeer(tandem: BenchTandem, ownerId: number, permissions?: Record<string, unknown>) {
  const { db } = tandem.server.context;
  const peer = await createUser(db, { username: "peer" });
  const key = await createApiKey(db, { userId: peer.id, scopes: ALL_SCOPES, label: "benchmark" });
  const now = new Date().toISOString();
  await db
    .insertInto("contacts")
    .values([
      { user_id: ownerId, contact_id: peer.id, created_at: now },
      { user_id: peer.id, contact_id: ownerId, created_at: now },
    ])
    .execute();
  if (permissions) {
    await db
      .insertInto("contact_permissions")
      .values({ grantor_id: ownerId, grantee_id: peer.id, permissions: JSON.stringify(permissions), created_at: now, updated_at: now })
      .execute();
  }
  return { authHeaders: { authorization: `Bearer ${key.apiKey}` } };
}

async function humanMode(count: number, warmup: number): Promise<string> {
  const tandem = await startBenchTandem("bench");
  const owner = await tandem.server.context.db.selectFrom("users").select("id").where("username", "=", "bench").executeTakeFirstOrThrow();
  const peer = await addPeer(tandem, Number(owner.id));
  const client = new KeepAliveClient(tandem.server.url, peer.authHeaders);
  try {
    let n = 0;
    process.stdout.write("measuring /healthz and POST /agent/message (human mode)…\n");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const [floor, human, keyed] = await interleaved(count, warmup, [
      () => client.expect(200, "GET", "/healthz"),
      () => client.expect(200, "POST", "/api/v1/agent/message", { to: "bench", message: `Message ${++n}: lunch on Friday?` }),
      () => {
        const request = ++n;
        return postJson(
          agent,
          `${tandem.server.apiUrl}/agent/message`,
          { ...peer.authHeaders, "idempotency-key": `bench-${request}` },
          {
            to: "bench",
            message: `Message ${request}: lunch on Friday?`,
          },
        );
      },
    ]);
    agent.destroy();
    return formatTable(HEADER, [
      row("GET /healthz (floor)", floor as LatencyStats),
      row("POST /agent/message human mode", human as LatencyStats, 5),
      row("POST /agent/message human mode, with an Idempotency-Key", keyed as LatencyStats, 5),
    ]);
  } finally {
    client.close();
    await tandem.close();
  }
}

async function agentRpc(count: number, warmup: number): Promise<string> {
  process.stdout.write(`seeding ${DEFAULT_SEED_OPTIONS.notes} notes…\n`);
  const tandem = await startSeededTandem(DEFAULT_SEED_OPTIONS);
  const peer = await addPeer(tandem, tandem.userId, { notesAccess: { scope: "all", access: "read" } });
  const asPeer = new KeepAliveClient(tandem.server.url, peer.authHeaders);
  const asOwner = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
  try {
    const check = await asPeer.expect(200, "POST", "/api/v1/agent/message", { to: "bench_coo", message: QUESTION });
    const answer = JSON.parse(check.body) as { response: string; toolsUsed: string[] };
    if (!answer.toolsUsed.includes("search_notes"))
      throw new Error(`the contact's run did not search the notes: ${check.body.slice(0, 400)}`);
    process.stdout.write("measuring the search alone, POST /chat (owner) and POST /agent/message bench_coo…\n");
    const [search, chat, rpc] = await interleaved(count, warmup, [
      () => asOwner.expect(200, "POST", "/api/v1/os/notes/search", { query: "budget review" }),
      () => asOwner.expect(200, "POST", "/api/v1/chat", { message: QUESTION, stream: false }),
      () => asPeer.expect(200, "POST", "/api/v1/agent/message", { to: "bench_coo", message: QUESTION }),
    ]);
    return formatTable(HEADER, [
      row('POST /os/notes/search "budget review" (the search alone)', search as LatencyStats),
      row("POST /chat local, stream false (the owner asking)", chat as LatencyStats),
      row("POST /agent/message bench_coo, local (a contact asking)", rpc as LatencyStats, 150),
    ]);
  } finally {
    asPeer.close();
    asOwner.close();
    await tandem.close();
  }
}

export async function run(): Promise<void> {
  const count = positiveIntFromEnv("BENCH_MESSAGING_REQUESTS", 200);
  const warmup = positiveIntFromEnv("BENCH_MESSAGING_WARMUP", 20);
  // BENCH_MESSAGING_PARTS=human (or rpc) runs one part only.
  const parts = stringFromEnv("BENCH_MESSAGING_PARTS", "human,rpc").split(",");
  process.stdout.write(`${describeMachine()}\n`);
  const human = parts.includes("human") ? await humanMode(count, warmup) : undefined;
  const rpc = parts.includes("rpc") ? await agentRpc(Math.max(1, Math.floor(count / 2)), Math.max(1, Math.floor(warmup / 2))) : undefined;
  if (human) process.stdout.write(`\n1. human mode (a contact's message into the pair's conversation)\n${human}\n`);
  if (rpc) process.stdout.write(`\n2. agent RPC, local provider, ${DEFAULT_SEED_OPTIONS.notes} notes, "${QUESTION}"\n${rpc}\n`);
  process.stdout.write("all times in ms, client-measured; same process as the server\n");
}
