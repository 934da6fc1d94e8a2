/**
 * `npm run bench -- <name>`: runs one benchmark. Each lives in its own module exporting `run()`,
 * loaded only when chosen, so one benchmark's imports (a server, a database) never slow another.
 */

interface BenchmarkModule {
  run(): Promise<void>;
}

interface BenchmarkEntry {
  readonly summary: string;
  load(): Promise<BenchmarkModule>;
}

/** Add a benchmark here: a name, one line for the usage text, and its module. */
const BENCHMARKS: Readonly<Record<string, BenchmarkEntry>> = {
  api: {
    summary: "authenticated GET /api/v1/os/folders vs a bare Express 5 app (target: median of alternating rounds ≥ 70% of bare)",
    load: () => import("./api"),
  },
  notes: {
    summary: "10,000 seeded notes: list / search / grep latency vs /healthz, and server memory with 1,000 notes open over sync",
    load: () => import("./notes"),
  },
  "memory-search": {
    summary:
      "10,000 notes under Memory: POST /os/memory/search for questions vs the floors, and ranked vs the old AND-only search (target: p50 ≤ 30 ms)",
    load: () => import("./memory-search"),
  },
  todos: {
    summary: "10,000 todos: GET /os/todos?date=today and ?q= latency vs /healthz (target: p50 ≤ 15 ms)",
    load: () => import("./todos"),
  },
  realtime: {
    summary:
      "message POST → message.dispatch on the recipient's stream vs a bare node:http SSE push (target: p50 ≤ 5 ms); 1,000 streams: RSS",
    load: () => import("./realtime"),
  },
  desktop: {
    summary:
      "2,000 notes: the desktop host's first full replication vs plain providers (target ≤ 20 s); web-mode cold start to an interactive note list, server up and down, vs the page alone (target ≤ 2 s)",
    load: () => import("./desktop"),
  },
  agent: {
    summary:
      "POST /chat: local provider over 10,000 notes (targets: first byte p50 ≤ 150 ms, answer ≤ 500 ms); added latency over a fake OpenAI-compatible stream (≤ 20 ms)",
    load: () => import("./agent"),
  },
  messaging: {
    summary:
      "POST /agent/message: human mode vs /healthz (target p50 ≤ 5 ms); <username>_coo RPC on the local provider over 10,000 notes (target p50 ≤ 150 ms)",
    load: () => import("./messaging"),
  },
  a2a: {
    summary: "A2A SendMessage / message/send to bench_coo vs POST /agent/message to it, same run (target: overhead p50 ≤ 5 ms)",
    load: () => import("./a2a"),
  },
  webhooks: {
    summary:
      "message → message.received verified by a local Standard Webhooks receiver (target p50 ≤ 50 ms); 10,000 deliveries drained while the receiver fails half",
    load: () => import("./webhooks"),
  },
  "raw-memory": {
    summary:
      "a 5 MB coding-agent session redacted, encrypted and uploaded to POST /raw-memory/records vs a plain upload of the same bytes (target ≤ 1 s)",
    load: () => import("./raw-memory"),
  },
  metering: {
    summary:
      "budget check on POST /chat (local provider) with budgets vs none, same run (target: p50 overhead ≤ 1 ms); GET /metering/usage over a month of 1,000,000 meter events (target: p50 ≤ 50 ms)",
    load: () => import("./metering"),
  },
  escalations: {
    summary:
      "ask → escalation.requested on the owner's stream (target p50 ≤ 10 ms) and continue → the tool runs (≤ 20 ms), each beside a same-run baseline",
    load: () => import("./escalations"),
  },
  heartbeat: {
    summary:
      "1,000 users with hourly heartbeats on the local provider: the maintenance tick's cost (none due vs no schedule) and the runs/minute one instance drains",
    load: () => import("./heartbeat"),
  },
  tools: {
    summary:
      "one tool call through POST /api/v1/tools and POST /mcp (raw and the MCP SDK's client) vs the same read over REST (target: POST /tools p50 ≤ 1 ms over it), the tool alone in process, /healthz and /identity",
    load: () => import("./tools"),
  },
  store: {
    summary:
      "a document store that never overwrites: row-lock merge (sole writer, contended) vs the overwrite it replaced vs an append-only log (store, load, compaction)",
    load: () => import("./store"),
  },
  sync: {
    summary: "one edit from client A to client B: Tandem vs stock Hocuspocus vs a raw ws relay (target: ≤ 1.25× stock at p50)",
    load: () => import("./sync"),
  },
  yjs: {
    summary:
      "one edit from a y-websocket client (/yjs) seen by a Hocuspocus client vs between two Hocuspocus clients, same server (target: ≤ 1.2× at p50)",
    load: () => import("./yjs"),
  },
  start: {
    summary:
      "tandem-server serve to the first /healthz 200 vs a bare node:http server (target ≤ 0.5 s); CLI commands vs node -e 0 (≤ 0.3 s); idle RSS vs bare (≤ 150 MB)",
    load: () => import("./start"),
  },
  scale: {
    summary:
      "two instances on one PostgreSQL + Redis: an event posted on one reaching a stream held on the other vs on the same (target p50 ≤ 5 ms)",
    load: () => import("./scale"),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((name) => name.length));
  const list = Object.entries(BENCHMARKS)
    .map(([name, entry]) => `  ${name.padEnd(width)}  ${entry.summary}`)
    .join("\n");
  return [
    "Usage: npm run bench -- <benchmark>",
    "",
    "Benchmarks:",
    list,
    "",
    "Environment: BENCH_SECONDS (measured seconds per target, default 10), BENCH_WARMUP_SECONDS (default 2),",
    "BENCH_CONNECTIONS (default 10). notes, sync and desktop have their own BENCH_NOTES_*, BENCH_SYNC_* and BENCH_DESKTOP_* settings:",
    "see bench/README.md.",
  ].join("\n");
}

async function main(argv: readonly string[]): Promise<number> {
  const [name] = argv;
  if (name === "-h" || name === "--help") {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  // hasOwn, not `in`: "toString" must be an unknown benchmark, not Object.prototype's.
  const entry = name !== undefined && Object.hasOwn(BENCHMARKS, name) ? BENCHMARKS[name] : undefined;
  if (!entry) {
    const problem = name === undefined ? "no benchmark given" : `unknown benchmark "${name}"`;
    process.stderr.write(`bench: ${problem}\n\n${usage()}\n`);
    return 2;
  }
  const benchmark = await entry.load();
  await benchmark.run();
  // A benchmark may set process.exitCode (e.g. when requests failed during measurement).
  return typeof process.exitCode === "number" ? process.exitCode : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
