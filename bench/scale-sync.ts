/**
 * `npm run bench -- scale`, edits across instances: one character typed by a HocuspocusProvider
 * connected to instance 1 until a provider on instance 2 has it (it crosses through the Redis
 * extension: a publish on instance 1, delivery and apply on instance 2, then instance 2's own
 * broadcast), against the same-run baseline of two providers both on instance 1. Each pair edits a
 * note of its own, one edit at a time, in alternating rounds.
 */
import { noteDocName } from "@tandem/core";
import { Redis } from "ioredis";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, type LatencyStats, summarize } from "./lib/latency";
import { formatTable } from "./lib/report";
import type { ScalePair } from "./lib/scale-pair";
import { connectProvider, firstText, type SyncClient, sameBody } from "./lib/sync-targets";
import { body, Prng } from "./lib/text-gen";

/** Across instances, p50 must stay within twice the same instance's p50 plus this. */
const TARGET_SLACK_MS = 1;
const TARGET_FACTOR = 2;
const EDIT_TIMEOUT_MS = 10_000;

interface EditPair {
  readonly label: string;
  readonly a: SyncClient;
  readonly b: SyncClient;
  readonly samples: number[];
}

/**
 * The floor of any cross-instance path: one Redis PUBLISH until the subscriber of another
 * connection (in this process) hears it, on a channel of its own.
 */
async function redisRoundTrip(redisUrl: string): Promise<{ sample(): Promise<number>; close(): void }> {
  const channel = `bench-scale-floor-${process.pid}-${Date.now()}`;
  const publisher = new Redis(redisUrl);
  const subscriber = new Redis(redisUrl);
  await subscriber.subscribe(channel);
  let heard: (at: number) => void = () => {};
  subscriber.on("message", () => heard(performance.now()));
  return {
    sample: async () => {
      const arrived = new Promise<number>((resolve) => {
        heard = resolve;
      });
      const started = performance.now();
      await Promise.all([publisher.publish(channel, "x"), arrived]);
      return (await arrived) - started;
    },
    close: () => {
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}

/** One edit: A inserts a character; resolves with the ms until B's document changes. */
async function oneEdit(pair: EditPair, position: number): Promise<number> {
  const text = firstText(pair.a.doc);
  if (!text) throw new Error(`${pair.label}: the note has no text to edit`);
  let timer: NodeJS.Timeout | undefined;
  let onUpdate = () => {};
  const observed = new Promise<number>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${pair.label}: B did not see an edit within ${EDIT_TIMEOUT_MS} ms`)), EDIT_TIMEOUT_MS);
    onUpdate = () => resolve(performance.now());
    pair.b.doc.on("update", onUpdate);
  });
  const started = performance.now();
  text.insert(Math.min(position, text.length), "x");
  try {
    return (await observed) - started;
  } finally {
    clearTimeout(timer);
    pair.b.doc.off("update", onUpdate);
  }
}

async function waitForSameBody(a: SyncClient, b: SyncClient, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!sameBody(a.doc, b.doc)) {
    if (Date.now() > deadline) throw new Error(`${what}: the two clients diverged`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function editsAcrossInstances(pair: ScalePair): Promise<void> {
  const count = positiveIntFromEnv("BENCH_SCALE_EDITS", 500);
  const warmup = positiveIntFromEnv("BENCH_SCALE_EDIT_WARMUP", 50);
  const rounds = positiveIntFromEnv("BENCH_SCALE_EDIT_ROUNDS", 10);
  const { one, two } = pair;
  const user = await pair.user("dana");
  const generated = body(new Prng(7), 300);
  const markdown = `Scale benchmark note: A types here and B watches.\n\n${generated.markdown}`;
  const clients: SyncClient[] = [];
  const closers: (() => void)[] = [];
  try {
    const note = async (title: string) => {
      const response = await fetch(`${one.apiUrl}/os/notes`, {
        method: "POST",
        headers: { authorization: `Bearer ${user.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ title, content: markdown, format: "markdown" }),
      });
      const text = await response.text();
      if (response.status !== 201) throw new Error(`creating a note answered ${response.status}: ${text.slice(0, 300)}`);
      return noteDocName((JSON.parse(text) as { result: { note: { uuid: string } } }).result.note.uuid);
    };
    const connect = async (syncUrl: string, name: string) => {
      const client = await connectProvider(syncUrl, name, user.apiKey);
      clients.push(client);
      return client;
    };
    const pairs: EditPair[] = [];
    for (const [label, bUrl] of [
      ["B on instance 2 (through Redis)", two.syncUrl],
      ["B on instance 1 (same instance)", one.syncUrl],
    ] as const) {
      const name = await note(label);
      const a = await connect(one.syncUrl, name);
      const b = await connect(bUrl, name);
      await waitForSameBody(a, b, label);
      pairs.push({ label, a, b, samples: [] });
    }
    console.log(
      `\nedits: one character typed by a provider on instance 1 until a provider on instance 2 / on instance 1 has it; a note of ${generated.words + 9} words per pair; ${warmup} warm-up + ${count} measured per row, one at a time, in ${rounds} alternating rounds`,
    );
    const floor = await redisRoundTrip(pair.redisUrl);
    closers.push(() => floor.close());
    const rows = [
      ...pairs.map((edit) => ({ label: edit.label, sample: (i: number) => oneEdit(edit, 40 + (i % 20)), samples: [] as number[] })),
      { label: "Redis PUBLISH → message alone (floor)", sample: () => floor.sample(), samples: [] as number[] },
    ];
    for (const row of rows) for (let i = 0; i < warmup; i++) await row.sample(i);
    const perRound = Math.max(1, Math.floor(count / rounds));
    for (let round = 0; round < rounds; round++) {
      for (const row of rows) for (let i = 0; i < perRound; i++) row.samples.push(await row.sample(i));
    }
    for (const edit of pairs) await waitForSameBody(edit.a, edit.b, edit.label);
    const [across, same, redis] = rows.map((row) => summarize(row.samples)) as [LatencyStats, LatencyStats, LatencyStats];
    const target = TARGET_FACTOR * same.p50Ms + TARGET_SLACK_MS;
    const cells = (stats: LatencyStats) => [stats.p50Ms, stats.p90Ms, stats.p99Ms, stats.maxMs, stats.meanMs].map(formatMs);
    console.log(
      formatTable(
        ["edit on A (instance 1) → seen by", "p50", "p90", "p99", "max", "mean", "target p50", "verdict"],
        [
          [rows[0]?.label ?? "", ...cells(across), `≤ ${formatMs(target)} (2× + 1)`, across.p50Ms <= target ? "PASS" : "BELOW"],
          [rows[1]?.label ?? "", ...cells(same), "-", "(baseline)"],
          [rows[2]?.label ?? "", ...cells(redis), "-", "(floor)"],
        ],
      ),
    );
    console.log(
      `another instance adds ${formatMs(across.p50Ms - same.p50Ms)} ms at p50 (${(across.p50Ms / same.p50Ms).toFixed(2)}×; of which the Redis hop alone ${formatMs(redis.p50Ms)}) and ${formatMs(across.p99Ms - same.p99Ms)} ms at p99\n`,
    );
  } finally {
    for (const client of clients) client.close();
    for (const close of closers) close();
  }
}
