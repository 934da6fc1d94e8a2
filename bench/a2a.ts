/**
 * `npm run bench -- a2a`: what A2A adds to an agent RPC. The same question to the same agent
 * (`bench_coo`, local provider, a contact's grant) through `POST /api/v1/agent/message` (the
 * baseline) and through `POST /a2a/bench_coo` as A2A v1.0 `SendMessage` and v0.3 `message/send`,
 * interleaved on one keep-alive connection each in the same run. Target: the A2A p50 at most 5 ms
 * above the baseline's.
 */
import { randomUUID } from "node:crypto";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { startBenchTandem } from "./lib/tandem";
import { addPeer, HEADER, interleaved, row } from "./messaging";

const QUESTION = "What is on my list this week?";
const TARGET_OVERHEAD_MS = 5;

export async function run(): Promise<void> {
  const count = positiveIntFromEnv("BENCH_A2A_REQUESTS", 300);
  const warmup = positiveIntFromEnv("BENCH_A2A_WARMUP", 30);
  process.stdout.write(`${describeMachine()}\n`);
  const tandem = await startBenchTandem("bench");
  const owner = await tandem.server.context.db.selectFrom("users").select("id").where("username", "=", "bench").executeTakeFirstOrThrow();
  const peer = await addPeer(tandem, Number(owner.id), { notesAccess: { scope: "all", access: "read" } });
  const rpc = new KeepAliveClient(tandem.server.url, peer.authHeaders);
  const v1 = new KeepAliveClient(tandem.server.url, { ...peer.authHeaders, "a2a-version": "1.0" });
  const v03 = new KeepAliveClient(tandem.server.url, peer.authHeaders);
  const sendMessage = () => ({
    jsonrpc: "2.0",
    id: randomUUID(),
    method: "SendMessage",
    params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: QUESTION }] } },
  });
  const legacySend = () => ({
    jsonrpc: "2.0",
    id: randomUUID(),
    method: "message/send",
    params: { message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: QUESTION }] } },
  });
  try {
    // Both must really reach the agent: an A2A error answers 200 too, so look at the body once.
    const check = JSON.parse((await v1.expect(200, "POST", "/a2a/bench_coo", sendMessage())).body) as { result?: { message?: unknown } };
    if (!check.result?.message) throw new Error(`SendMessage did not answer a message: ${JSON.stringify(check).slice(0, 300)}`);
    process.stdout.write("measuring /healthz, POST /agent/message bench_coo, and A2A SendMessage / message/send…\n");
    const [floor, baseline, a2a, legacy] = (await interleaved(count, warmup, [
      () => rpc.expect(200, "GET", "/healthz"),
      () => rpc.expect(200, "POST", "/api/v1/agent/message", { to: "bench_coo", message: QUESTION }),
      () => v1.expect(200, "POST", "/a2a/bench_coo", sendMessage()),
      () => v03.expect(200, "POST", "/a2a/bench_coo", legacySend()),
    ])) as LatencyStats[];
    const overhead = (stats: LatencyStats) => stats.p50Ms - (baseline as LatencyStats).p50Ms;
    const verdict = (stats: LatencyStats) => (overhead(stats) <= TARGET_OVERHEAD_MS ? "PASS" : "BELOW");
    process.stdout.write(
      `\n${formatTable(HEADER, [
        row("GET /healthz (floor)", floor as LatencyStats),
        row("POST /api/v1/agent/message bench_coo (baseline)", baseline as LatencyStats),
        row("POST /a2a/bench_coo SendMessage (A2A 1.0)", a2a as LatencyStats),
        row("POST /a2a/bench_coo message/send (A2A 0.3)", legacy as LatencyStats),
      ])}\n`,
    );
    for (const [name, stats] of [
      ["SendMessage", a2a],
      ["message/send", legacy],
    ] as const) {
      process.stdout.write(
        `A2A ${name} overhead over POST /agent/message, p50: ${formatMs(overhead(stats as LatencyStats))} ms (target ≤ ${TARGET_OVERHEAD_MS} ms) ${verdict(stats as LatencyStats)}\n`,
      );
    }
    process.stdout.write("all times in ms, client-measured, sequential and interleaved; same process as the server\n");
  } finally {
    rpc.close();
    v1.close();
    v03.close();
    await tandem.close();
  }
}
