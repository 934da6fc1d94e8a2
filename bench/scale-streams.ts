/**
 * `npm run bench -- scale`, streams across instances: two servers (in this process) on one
 * PostgreSQL schema and one Redis. One sample writes an event for alice through instance 1 (bob's
 * `POST /agent/message` in human mode, or the append alone in one transaction) and runs until its
 * frame is parsed on alice's `GET /agent/stream`, held on instance 2 (the event crosses through a
 * Redis wake-up and a read of the log there) or, the same-run baseline, on instance 1 (the
 * in-process notification), in alternating rounds.
 */
import type { RunningServer } from "../apps/server/src/server";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, summarize } from "./lib/latency";
import { formatTable } from "./lib/report";
import type { ScalePair } from "./lib/scale-pair";
import { SseClient } from "./lib/sse-client";

const TARGET_P50_MS = 5;
const EVENT_TIMEOUT_MS = 10_000;

interface Result {
  label: string;
  stats: LatencyStats;
}

export async function streamsAcrossInstances(pair: ScalePair): Promise<void> {
  const count = positiveIntFromEnv("BENCH_SCALE_STREAM_MESSAGES", 500);
  const warmup = positiveIntFromEnv("BENCH_SCALE_STREAM_WARMUP", 50);
  const rounds = positiveIntFromEnv("BENCH_SCALE_STREAM_ROUNDS", 10);
  const { one, two } = pair;
  const { db } = one.context;
  const clients: KeepAliveClient[] = [];
  const streams: SseClient[] = [];
  try {
    const [aliceUser, bobUser] = [await pair.user("alice"), await pair.user("bob")];
    const [aliceKey, bobKey] = [aliceUser.apiKey, bobUser.apiKey];
    const alice = new KeepAliveClient(one.url, { authorization: `Bearer ${aliceKey}` });
    const bob = new KeepAliveClient(one.url, { authorization: `Bearer ${bobKey}` });
    clients.push(alice, bob);
    for (const [client, to] of [
      [alice, "bob"],
      [bob, "alice"],
    ] as const) {
      const answer = await client.request("POST", "/api/v1/network/request", { to });
      if (answer.status >= 300) throw new Error(`network request answered ${answer.status}: ${answer.body.slice(0, 300)}`);
    }

    // Alice holds one stream on each instance; a sample waits for the frame on the one measured.
    const waiting = new Map<string, (at: number) => void>();
    const open = async (server: RunningServer) => {
      const stream = await SseClient.open(`${server.apiUrl}/agent/stream`, { authorization: `Bearer ${aliceKey}` });
      streams.push(stream);
      stream.onEvent((event) => {
        const data = (JSON.parse(event.data) as { data: { message?: { content?: string }; tag?: string } }).data;
        const tag = data.message?.content ?? data.tag;
        if (tag !== undefined) waiting.get(`${server.url} ${tag}`)?.(performance.now());
      });
      return server;
    };
    const held = [
      { label: "on instance 2 (Redis wake-up)", server: await open(two) },
      { label: "on instance 1 (same instance)", server: await open(one) },
    ];
    const aliceId = aliceUser.id;
    /** Two ways to write the event on instance 1: over HTTP as a client does, and the append alone (in process). */
    const writers = {
      "POST /agent/message → frame": async (tag: string) => {
        const answer = await bob.request("POST", "/api/v1/agent/message", { to: "alice", message: tag, mode: "human" });
        if (answer.status !== 200) throw new Error(`POST /agent/message answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      },
      "append (one transaction) → frame": async (tag: string) => {
        const events = one.context.realtime.batch();
        await db.transaction().execute((tx) => events.appendToUserStream(tx, aliceId, "bench.event", { tag }));
        events.publish();
      },
    };
    let sequence = 0;
    const sample = async (server: RunningServer, write: (tag: string) => Promise<void>): Promise<number> => {
      const tag = `m-${sequence++}`;
      let timer: NodeJS.Timeout | undefined;
      const arrived = new Promise<number>((resolve, reject) => {
        waiting.set(`${server.url} ${tag}`, resolve);
        timer = setTimeout(() => reject(new Error(`no frame for ${tag} in ${EVENT_TIMEOUT_MS} ms`)), EVENT_TIMEOUT_MS);
      });
      const started = performance.now();
      await write(tag);
      try {
        return (await arrived) - started;
      } finally {
        clearTimeout(timer);
        waiting.delete(`${server.url} ${tag}`);
      }
    };
    console.log(
      `\nstreams: an event written through instance 1 until its frame is parsed on alice's /agent/stream; ${warmup} warm-up + ${count} measured per row, one at a time, in ${rounds} alternating rounds (PostgreSQL + Redis, loopback)`,
    );
    for (const [what, write] of Object.entries(writers)) {
      for (const target of held) for (let i = 0; i < warmup; i++) await sample(target.server, write);
      const samples = held.map(() => [] as number[]);
      const perRound = Math.max(1, Math.floor(count / rounds));
      for (let round = 0; round < rounds; round++) {
        for (const [index, target] of held.entries()) {
          for (let i = 0; i < perRound; i++) samples[index]?.push(await sample(target.server, write));
        }
      }
      const results: Result[] = held.map((target, index) => ({
        label: `${what}, stream ${target.label}`,
        stats: summarize(samples[index] ?? []),
      }));
      console.log(
        formatTable(
          ["written, stream held", "p50", "p90", "p99", "max", "mean", "target p50", "verdict"],
          results.map((result, index) => [
            result.label,
            formatMs(result.stats.p50Ms),
            formatMs(result.stats.p90Ms),
            formatMs(result.stats.p99Ms),
            formatMs(result.stats.maxMs),
            formatMs(result.stats.meanMs),
            index === 0 ? `≤ ${TARGET_P50_MS} ms` : "-",
            index === 0 ? (result.stats.p50Ms <= TARGET_P50_MS ? "PASS" : "BELOW") : "(baseline)",
          ]),
        ),
      );
      const [across, same] = results;
      if (across && same) {
        console.log(
          `another instance adds ${formatMs(across.stats.p50Ms - same.stats.p50Ms)} ms at p50 and ${formatMs(across.stats.p99Ms - same.stats.p99Ms)} ms at p99 (a Redis publish and delivery, then the log read on instance 2)\n`,
        );
      }
    }
    console.log("all times in ms, measured in this process from starting the write to parsing the frame");
  } finally {
    for (const stream of streams) stream.close();
    for (const client of clients) client.close();
  }
}
