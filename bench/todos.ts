/**
 * `npm run bench -- todos`: 10,000 todos in one user's todos document; latency of the filtered
 * listings a todo view asks for (`?date=today` in a time zone, `?q=` full text), one request at a
 * time, beside `GET /healthz` and `GET /identity` measured the same way as the floor.
 */
import { randomUUID } from "node:crypto";
import { putTodo, type TodoMeta, todayIn, todosDocName } from "@tandem/core";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, sampleSequential } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { startBenchTandem } from "./lib/tandem";

const WORDS = ["invoice", "garden", "dentist", "report", "groceries", "plumber", "taxes", "birthday", "review", "backup", "renew", "call"];
const TIME_ZONE = "Europe/Berlin";

/** A deterministic PRNG, so every run seeds the same todos. */
function prng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shiftDate(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function seedTodos(count: number, today: string): Map<string, TodoMeta> {
  const random = prng(4242);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)] as string;
  const todos = new Map<string, TodoMeta>();
  for (let i = 0; i < count; i++) {
    const created = new Date(Date.UTC(2026, 0, 1) + Math.floor(random() * 320 * 86_400_000)).toISOString();
    const completed = random() < 0.4;
    todos.set(randomUUID(), {
      title: `${pick()} ${pick()} #${i}`,
      description: random() < 0.6 ? `remember the ${pick()} and the ${pick()}` : "",
      // About one in sixty due today, the rest spread over three months either side.
      dueDate: random() < 0.1 ? null : shiftDate(today, Math.floor(random() * 181) - 90),
      priority: random() < 0.3 ? null : 1 + Math.floor(random() * 4),
      completed,
      completedAt: completed ? created : null,
      steps: random() < 0.2 ? [{ title: pick(), completed: false }] : [],
      createdAt: created,
      updatedAt: created,
    });
  }
  return todos;
}

export async function run(): Promise<void> {
  const count = positiveIntFromEnv("BENCH_TODOS", 10_000);
  const samples = positiveIntFromEnv("BENCH_TODOS_REQUESTS", 200);
  const tandem = await startBenchTandem();
  const client = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
  try {
    console.log(describeMachine());
    const today = todayIn(TIME_ZONE);
    const seeded = seedTodos(count, today);
    const started = performance.now();
    const userId = (await client.expect(200, "GET", "/api/v1/identity").then((a) => JSON.parse(a.body))).userId as number;
    // One document transaction through the sync hub, as a client replicating its list would send.
    await tandem.server.context.sync.change(todosDocName(userId), userId, (doc) => {
      for (const [uuid, todo] of seeded) putTodo(doc, uuid, todo);
    });
    console.log(
      `seeded ${count.toLocaleString("en")} todos (document, storage and view) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const targets: [label: string, path: string, target?: number][] = [
      ["GET /healthz (floor: no auth, no SQL)", "/healthz"],
      ["GET /api/v1/identity (floor + auth, 1 row)", "/api/v1/identity"],
      [`GET /os/todos?date=today&timezone=${TIME_ZONE}`, `/api/v1/os/todos?date=today&timezone=${encodeURIComponent(TIME_ZONE)}`, 15],
      ["GET /os/todos?q=garden", "/api/v1/os/todos?q=garden", 15],
      ["GET /os/todos?q=renew%20taxes&completed=false", "/api/v1/os/todos?q=renew%20taxes&completed=false", 15],
    ];
    const results: [string, LatencyStats, string, number | undefined][] = [];
    for (const [label, path, target] of targets) {
      const answer = await client.expect(200, "GET", path);
      const parsed = JSON.parse(answer.body) as { result?: { total: number } };
      const stats = await sampleSequential(
        async () => {
          await client.expect(200, "GET", path);
        },
        { warmup: 20, count: samples },
      );
      results.push([label, stats, parsed.result ? `${parsed.result.total} of ${count}` : "", target]);
    }
    console.log(`settings: 20 warm-up + ${samples} measured requests per target, one at a time over one keep-alive connection\n`);
    console.log(
      formatTable(
        ["request", "matches", "p50", "p90", "p99", "mean", "target p50", "verdict"],
        results.map(([label, stats, matches, target]) => [
          label,
          matches,
          formatMs(stats.p50Ms),
          formatMs(stats.p90Ms),
          formatMs(stats.p99Ms),
          formatMs(stats.meanMs),
          target ? `≤ ${target} ms` : "-",
          target ? (stats.p50Ms <= target ? "PASS" : "BELOW") : "(baseline)",
        ]),
      ),
    );
    console.log("all times in ms, client-measured (request sent → whole body read)");
  } finally {
    client.close();
    await tandem.close();
  }
}
