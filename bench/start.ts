/**
 * `npm run bench -- start`: how fast the server starts and its CLI answers, and what the idle
 * server holds, each beside the same measured for bare Node in the same run, in alternating rounds
 * so other load on the machine hits both alike:
 * - `tandem-server serve` (the built server, as `npm start` runs it, without npm's own start-up) from
 *   spawn to the first 200 from `/healthz`, beside a bare `node:http` server's spawn to its first 200;
 * - `tandem-server --help` and real commands (`keys list`, `credits show`, `team show`) to their exit,
 *   beside `node -e 0`;
 * - the server's RSS once it answered (and after a first authenticated request), and once idle:
 *   after BENCH_START_IDLE_SECONDS (default 45) without requests, when V8 has given back the heap
 *   the start grew (its memory reducer runs after a while of idling), beside the bare server's.
 * Targets: start ≤ 500 ms, every CLI command ≤ 300 ms, idle RSS ≤ 150 MB.
 *
 * BENCH_START_COMPARE_BIN=<path to another build's tandem-server.mjs> measures that build too, in
 * the same rounds, rows marked "(compared)": a change's effect beside what it replaced, under the
 * same load.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureBuilt } from "../apps/server/scripts/build.mjs";
import { describeLoad, positiveIntFromEnv } from "./lib/env";
import { formatMs, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";

const BIN = fileURLToPath(new URL("../apps/server/bin/tandem-server.mjs", import.meta.url));
const COMPARE_BIN = process.env.BENCH_START_COMPARE_BIN ? path.resolve(process.env.BENCH_START_COMPARE_BIN) : undefined;
const COMPARED = " (compared)";
const START_TARGET_MS = 500;
const CLI_TARGET_MS = 300;
const RSS_TARGET_MB = 150;

/** A `node:http` server that answers 200 to everything and prints its port: the floor for a start. */
const BARE_SERVER = `
const server = require("node:http").createServer((req, res) => res.end('{"status":"ok"}'));
server.listen(0, "127.0.0.1", () => console.error(JSON.stringify({ url: "http://127.0.0.1:" + server.address().port })));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
`;

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly ms: number;
}

/** Spawns a server and times it from spawn to the first 200 from /healthz. */
async function startTimed(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.once("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code} before listening:\n${buffered}`)));
    child.stderr?.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(buffered);
      if (match?.[1]) resolve(match[1]);
    });
  });
  for (;;) {
    const response = await fetch(`${url}/healthz`).catch(() => undefined);
    await response?.arrayBuffer();
    if (response?.status === 200) break;
  }
  return { child, url, ms: performance.now() - started };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** Resident memory of a process, from /proc (Linux), in bytes. */
async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (!kib) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}

/** Runs a command to its exit, timed; a failure stops the benchmark (a failing command measures nothing). */
async function runTimed(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<{ ms: number; stdout: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`${args.join(" ")} exited with ${code}:\n${stderr}`);
  return { ms, stdout };
}

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
}

function verdict(ok: boolean): string {
  return ok ? "PASS" : "ABOVE";
}

export async function run(): Promise<void> {
  const rounds = positiveIntFromEnv("BENCH_START_ROUNDS", 7);
  const idleSeconds = positiveIntFromEnv("BENCH_START_IDLE_SECONDS", 45);
  console.log(describeMachine());
  console.log(describeLoad());
  if (COMPARE_BIN) console.log(`compared with: ${COMPARE_BIN}`);
  console.log(
    `settings: ${rounds} rounds, each target once per round in turn; figures are medians (min in brackets); idle: ${idleSeconds} s`,
  );
  // The benchmark measures the build; a stale one would be rebuilt inside the first measured start.
  await ensureBuilt();

  const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-bench-start-"));
  const storage = ["--data-dir", dataDir];
  const env = { TANDEM_LOG_LEVEL: "info", TANDEM_ACCESS_LOG: "silent" };
  try {
    // An existing database, as at every start but the first; its first start (the migrations) is not measured.
    const created = await runTimed([BIN, "users", "add", "alice", ...storage, "--create-database"]);
    const apiKey = (JSON.parse(created.stdout) as { apiKey: string }).apiKey;

    const samples: Record<string, number[]> = {};
    const add = (name: string, ms: number) => {
      samples[name] ??= [];
      samples[name].push(ms);
    };
    const rss = { bare: [] as number[], tandem: [] as number[], tandemAfterRequest: [] as number[] };
    const commandsOf = (bin: string, suffix: string): [string, readonly string[]][] => [
      [`tandem-server --help${suffix}`, [bin, "--help"]],
      [`tandem-server keys list alice${suffix}`, [bin, "keys", "list", "alice", ...storage]],
      [`tandem-server credits show alice${suffix}`, [bin, "credits", "show", "alice", ...storage]],
      [`tandem-server team show${suffix}`, [bin, "team", "show", ...storage]],
    ];
    const commands = [...commandsOf(BIN, ""), ...(COMPARE_BIN ? commandsOf(COMPARE_BIN, COMPARED) : [])];
    for (let round = 0; round < rounds; round++) {
      const bare = await startTimed(["-e", BARE_SERVER]);
      add("bare node:http server", bare.ms);
      rss.bare.push(await rssOf(bare.child.pid as number));
      await stop(bare.child);

      const tandem = await startTimed([BIN, "serve", "--port", "0", ...storage], env);
      add("tandem-server serve", tandem.ms);
      rss.tandem.push(await rssOf(tandem.child.pid as number));
      const identity = await fetch(`${tandem.url}/api/v1/identity`, { headers: { authorization: `Bearer ${apiKey}` } });
      await identity.arrayBuffer();
      if (identity.status !== 200) throw new Error(`GET /api/v1/identity answered ${identity.status}`);
      rss.tandemAfterRequest.push(await rssOf(tandem.child.pid as number));
      await stop(tandem.child);
      if (COMPARE_BIN) {
        const compared = await startTimed([COMPARE_BIN, "serve", "--port", "0", ...storage], env);
        add(`tandem-server serve${COMPARED}`, compared.ms);
        await stop(compared.child);
      }

      add("node -e 0", (await runTimed(["-e", "0"])).ms);
      for (const [name, args] of commands) add(name, (await runTimed(args)).ms);
    }

    // Idle: both servers up side by side, untouched, then read.
    const idleBare = await startTimed(["-e", BARE_SERVER]);
    const idleTandem = await startTimed([BIN, "serve", "--port", "0", ...storage], env);
    await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
    const idle = { bare: await rssOf(idleBare.child.pid as number), tandem: await rssOf(idleTandem.child.pid as number) };
    await Promise.all([stop(idleBare.child), stop(idleTandem.child)]);

    const median = (values: readonly number[]) => summarize(values).p50Ms;
    const row = (name: string, target: number | undefined, baseline: string) => {
      const stats = summarize(samples[name] ?? []);
      return [
        name,
        `${formatMs(stats.p50Ms)} (${formatMs(stats.minMs)})`,
        target === undefined ? "" : `≤ ${target}`,
        target === undefined ? "baseline" : verdict(stats.p50Ms <= target),
        baseline,
      ];
    };
    console.log("\nStart: spawn to the first 200 from /healthz (an existing SQLite database)");
    console.log(
      formatTable(
        ["target", "ms", "target ms", "", ""],
        [
          row("bare node:http server", undefined, ""),
          row("tandem-server serve", START_TARGET_MS, ""),
          ...(COMPARE_BIN ? [row(`tandem-server serve${COMPARED}`, START_TARGET_MS, "")] : []),
        ],
      ),
    );
    const floor = median(samples["node -e 0"] ?? []);
    console.log("\nCLI: spawn to exit");
    console.log(
      formatTable(
        ["command", "ms", "target ms", "", "over node -e 0"],
        [
          row("node -e 0", undefined, ""),
          ...commands.map(([name]) => row(name, CLI_TARGET_MS, `+${formatMs(median(samples[name] ?? []) - floor)}`)),
        ],
      ),
    );
    console.log("\nRSS");
    console.log(
      formatTable(
        ["process", "RSS", "target", ""],
        [
          ["bare node:http server, at its first 200", mib(median(rss.bare)), "", "baseline"],
          ["tandem-server serve, at its first /healthz 200", mib(median(rss.tandem)), "", ""],
          ["  after one GET /api/v1/identity", mib(median(rss.tandemAfterRequest)), "", ""],
          [`bare node:http server, idle ${idleSeconds} s`, mib(idle.bare), "", "baseline"],
          [
            `tandem-server serve, idle ${idleSeconds} s`,
            mib(idle.tandem),
            `≤ ${RSS_TARGET_MB} MB`,
            verdict(idle.tandem <= RSS_TARGET_MB * 1e6),
          ],
        ],
      ),
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}
