/**
 * `npm run bench -- heartbeat`: 1,000 users with hourly heartbeats on the `local` provider.
 * 1. Scheduler overhead: the maintenance tick (every task, the heartbeat scheduler among them)
 *    with no schedule on (the same-run baseline), with every user's hourly schedule on but none
 *    due, and again once the run history holds two runs per user.
 * 2. Throughput: every user due at once (the worst case: all switched on in the same minute), the
 *    tick draining them `TANDEM_HEARTBEAT_CONCURRENCY` at a time: the first hour (each run writes
 *    the default checklist note and delivers its message) and the second (steady state: the
 *    checklist exists and the unchanged message is suppressed as a repeat). Baseline: the same
 *    steady-state pass asked for one at a time through `POST /heartbeat/run`.
 */
import { performance } from "node:perf_hooks";
import { ALL_SCOPES, putTodo, todayIn, todosDocName } from "@tandem/core";
import type { PolicySetter } from "../apps/server/src/agent/heartbeat/heartbeat-credential";
import { updatePolicy } from "../apps/server/src/agent/heartbeat/heartbeat-policy";
import { createApiKey } from "../apps/server/src/auth/api-keys";
import { createUser } from "../apps/server/src/people/users/users-service";
import { describeLoad, positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, sampleSequential } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { type BenchTandem, startBenchTandem } from "./lib/tandem";

const HOUR = 60 * 60_000;

function shiftDate(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Users with three open todos each (overdue, due today, high priority), so every pass has something to say. */
/** Seeds `count` users with three todos each; answers each with the key that will switch its schedule on. */
async function seedUsers(tandem: BenchTandem, count: number): Promise<{ id: number; setBy: PolicySetter }[]> {
  const { db, sync } = tandem.server.context;
  const today = todayIn("UTC");
  const ids: { id: number; setBy: PolicySetter }[] = [];
  for (let i = 0; i < count; i++) {
    const user = await createUser(db, { username: `hb${i}` });
    // A scheduled run is capped to the credential that switched the schedule on (docs/agent.md): a key with every scope.
    const key = await createApiKey(db, { userId: user.id, scopes: ALL_SCOPES });
    const now = new Date().toISOString();
    const todo = (title: string, dueDate: string | null, priority: number | null) => ({
      title,
      description: "",
      dueDate,
      priority,
      completed: false,
      completedAt: null,
      steps: [],
      createdAt: now,
      updatedAt: now,
    });
    await sync.change(todosDocName(user.id), user.id, (doc) => {
      putTodo(doc, `00000000-0000-4000-8000-${String(3 * i).padStart(12, "0")}`, todo(`Pay invoice ${i}`, shiftDate(today, -1), 2));
      putTodo(doc, `00000000-0000-4000-8000-${String(3 * i + 1).padStart(12, "0")}`, todo(`Call supplier ${i}`, today, null));
      putTodo(doc, `00000000-0000-4000-8000-${String(3 * i + 2).padStart(12, "0")}`, todo(`Plan launch ${i}`, shiftDate(today, 9), 1));
    });
    ids.push({ id: user.id, setBy: { kind: "api_key", id: key.keyId, scopes: new Set(ALL_SCOPES) } });
  }
  return ids;
}

async function runCounts(tandem: BenchTandem) {
  const rows = await tandem.server.context.db
    .selectFrom("heartbeat_runs")
    .select(["status", "delivered", "suppressed", (eb) => eb.fn.countAll<number>().as("n")])
    .where("source", "=", "schedule")
    .groupBy(["status", "delivered", "suppressed"])
    .execute();
  const count = (filter: (row: (typeof rows)[number]) => boolean) => rows.filter(filter).reduce((sum, row) => sum + Number(row.n), 0);
  return {
    total: count(() => true),
    completed: count((row) => row.status === "completed"),
    delivered: count((row) => row.delivered === 1),
    suppressed: count((row) => row.suppressed === 1),
  };
}

interface Drain {
  readonly runs: number;
  readonly seconds: number;
  readonly perMinute: number;
  readonly loopBusy: number;
}

/** Moves the server's clock past every user's next run, then times one tick draining them all. */
async function drainAll(tandem: BenchTandem, expected: number): Promise<Drain> {
  const { clock, maintenance } = tandem.server.context;
  const before = await runCounts(tandem);
  clock.advance(HOUR + 60_000);
  const loop = performance.eventLoopUtilization();
  const started = performance.now();
  await maintenance.runAll();
  const ms = performance.now() - started;
  const busy = performance.eventLoopUtilization(loop);
  const after = await runCounts(tandem);
  const runs = after.total - before.total;
  if (runs !== expected || after.completed - before.completed !== expected) {
    throw new Error(`expected ${expected} completed scheduled runs, got ${runs} (${after.completed - before.completed} completed)`);
  }
  return { runs, seconds: ms / 1000, perMinute: (runs / ms) * 60_000, loopBusy: busy.utilization };
}

async function sampleTicks(tandem: BenchTandem, count: number): Promise<LatencyStats> {
  const { maintenance } = tandem.server.context;
  return sampleSequential(() => maintenance.runAll(), { warmup: 20, count });
}

export async function run(): Promise<void> {
  const users = positiveIntFromEnv("BENCH_HEARTBEAT_USERS", 1000);
  const ticks = positiveIntFromEnv("BENCH_HEARTBEAT_TICKS", 200);
  const manualRuns = positiveIntFromEnv("BENCH_HEARTBEAT_MANUAL", 200);
  const concurrency = positiveIntFromEnv("TANDEM_HEARTBEAT_CONCURRENCY", 4);
  // No maintenance timer: every tick measured is one this benchmark started.
  const tandem = await startBenchTandem("bench", { maintenanceIntervalMs: 0, heartbeatConcurrency: concurrency });
  let client: KeepAliveClient | undefined;
  try {
    console.log(describeMachine());
    console.log(describeLoad());
    let started = performance.now();
    const ids = await seedUsers(tandem, users);
    console.log(`seeded ${users.toLocaleString("en")} users with 3 todos each in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    console.log("measuring the maintenance tick: no schedule on…");
    const idle = await sampleTicks(tandem, ticks);
    started = performance.now();
    const now = tandem.server.context.clock.now();
    for (const { id, setBy } of ids)
      await updatePolicy(tandem.server.context.db, id, { schedule: { enabled: true, everyMinutes: 60, quietHours: null } }, now, setBy);
    console.log(`switched ${users.toLocaleString("en")} hourly schedules on in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    console.log("measuring the maintenance tick: every schedule on, none due…");
    const notDue = await sampleTicks(tandem, ticks);

    console.log(`draining ${users.toLocaleString("en")} due heartbeats (first hour: checklist written, message delivered)…`);
    const first = await drainAll(tandem, users);
    console.log(`draining ${users.toLocaleString("en")} due heartbeats (second hour: steady state)…`);
    const second = await drainAll(tandem, users);
    const counts = await runCounts(tandem);
    console.log("measuring the maintenance tick again: none due, two runs per user in the history…");
    const notDueLater = await sampleTicks(tandem, ticks);

    console.log(`measuring POST /heartbeat/run, one at a time (${manualRuns} runs)…`);
    // One of the seeded users, whose pass reads the same todos as the scheduled ones.
    const key = await createApiKey(tandem.server.context.db, {
      userId: (ids[0] as { id: number }).id,
      scopes: ALL_SCOPES,
      label: "benchmark",
    });
    client = new KeepAliveClient(tandem.server.url, { authorization: `Bearer ${key.apiKey}` });
    const manualClient = client;
    await manualClient.expect(200, "POST", "/api/v1/heartbeat/run", {});
    const manual = await sampleSequential(
      async () => {
        await manualClient.expect(200, "POST", "/api/v1/heartbeat/run", {});
      },
      { warmup: 5, count: manualRuns },
    );

    console.log(
      `\nsettings: ${users} users, hourly schedules, local provider, SQLite, ${concurrency} scheduled runs at once; ${ticks} ticks per tick row\n`,
    );
    console.log(
      formatTable(
        ["maintenance tick (all tasks)", "n", "p50", "p90", "p99", "mean"],
        [
          ["no schedule on (baseline)", idle],
          [`${users} schedules on, none due`, notDue],
          [`${users} schedules on, none due, ${counts.total} runs kept`, notDueLater],
        ].map(([label, stats]) => {
          const s = stats as LatencyStats;
          return [label as string, String(s.count), formatMs(s.p50Ms), formatMs(s.p90Ms), formatMs(s.p99Ms), formatMs(s.meanMs)];
        }),
      ),
    );
    console.log(`scheduler overhead with ${users} schedules not due: ${formatMs(notDue.p50Ms - idle.p50Ms)} ms per tick at p50\n`);
    const manualPerMinute = 60_000 / manual.meanMs;
    console.log(
      formatTable(
        ["heartbeat runs", "runs", "seconds", "runs/minute", "per run (ms)", "loop busy"],
        [
          ["scheduled, first hour (writes the checklist, delivers)", first],
          ["scheduled, second hour (steady state, repeats suppressed)", second],
        ]
          .map(([label, drain]) => {
            const d = drain as Drain;
            return [
              label as string,
              String(d.runs),
              d.seconds.toFixed(1),
              Math.round(d.perMinute).toLocaleString("en"),
              formatMs((d.seconds * 1000) / d.runs),
              `${Math.round(d.loopBusy * 100)}%`,
            ];
          })
          .concat([
            [
              "POST /heartbeat/run one at a time, steady state (baseline)",
              String(manual.count),
              ((manual.meanMs * manual.count) / 1000).toFixed(1),
              Math.round(manualPerMinute).toLocaleString("en"),
              `${formatMs(manual.meanMs)} (p50 ${formatMs(manual.p50Ms)})`,
              "",
            ],
          ]),
      ),
    );
    console.log(
      `scheduled runs: ${counts.completed} completed of ${counts.total}, ${counts.delivered} delivered, ${counts.suppressed} suppressed as repeats`,
    );
    console.log(
      `hourly heartbeats one instance could carry at the steady rate: about ${Math.round(second.perMinute * 60).toLocaleString("en")} users`,
    );
  } finally {
    client?.close();
    await tandem.close();
  }
}
