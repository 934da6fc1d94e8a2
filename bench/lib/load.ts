import { performance } from "node:perf_hooks";
import autocannon from "autocannon";

/** How hard and how long to load the targets; the same settings are used for every target in a run. */
export interface LoadSettings {
  readonly connections: number;
  /** Warm-up per target before the first round, not counted. */
  readonly warmupSeconds: number;
  /** Measured rounds; each loads every target once, for `roundSeconds` each. */
  readonly rounds: number;
  readonly roundSeconds: number;
}

export interface LoadTarget {
  readonly url: string;
  readonly headers?: Record<string, string>;
}

export interface LoadResult {
  /** Completed requests over the measured time. */
  readonly requestsPerSecond: number;
  /** Latency of 2xx responses, whole milliseconds (autocannon's resolution). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Mean latency, to two decimals: more telling than p50 when that rounds to 0 or 1 ms. */
  readonly meanMs: number;
  readonly completed: number;
  /** Measured seconds, as autocannon timed them. */
  readonly seconds: number;
  /** Connection errors and timeouts. */
  readonly errors: number;
  readonly non2xx: number;
  /** Completed requests by status code, e.g. `{ "200": 51234 }`. */
  readonly statusCodes: Readonly<Record<string, number>>;
  /**
   * Share of the measured time this process's main thread was busy, 0–1. Below ~0.9 under load
   * means the server was waiting (on the database's thread pool, say) rather than computing.
   */
  readonly eventLoopUtilization: number;
  /**
   * Main-thread busy time per completed request, in µs: roughly the server's own cost per request,
   * which says where a throughput gap comes from. It is wall-clock time, so it overstates CPU time
   * when the thread competes for a core (the load generator and SQLite's pool run on the same machine).
   */
  readonly busyMicrosPerRequest: number;
  /**
   * Main-thread CPU time per completed request, in µs (user + system, `process.threadCpuUsage`):
   * unlike the busy time it does not count time the thread waited for a core, so it moves little
   * with load from elsewhere. NaN where Node has no per-thread CPU clock (before 23.9).
   */
  readonly cpuMicrosPerRequest: number;
}

/** This thread's CPU time in µs, or NaN where Node cannot tell. */
function threadCpuMicros(): number {
  if (typeof process.threadCpuUsage !== "function") return Number.NaN;
  const { user, system } = process.threadCpuUsage();
  return user + system;
}

const DEFAULTS: LoadSettings = { connections: 10, warmupSeconds: 2, rounds: 8, roundSeconds: 2 };

/** A positive number from the environment, or the default; anything else is a mistake worth stopping for. */
function positiveFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/**
 * `BENCH_CONNECTIONS`, `BENCH_WARMUP_SECONDS`, `BENCH_ROUNDS` and `BENCH_ROUND_SECONDS` override
 * the defaults (10 connections, 2 s, 8 rounds of 2 s per target).
 */
export function loadSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  return {
    connections: Math.round(positiveFromEnv("BENCH_CONNECTIONS", DEFAULTS.connections, env)),
    warmupSeconds: positiveFromEnv("BENCH_WARMUP_SECONDS", DEFAULTS.warmupSeconds, env),
    rounds: Math.round(positiveFromEnv("BENCH_ROUNDS", DEFAULTS.rounds, env)),
    roundSeconds: positiveFromEnv("BENCH_ROUND_SECONDS", DEFAULTS.roundSeconds, env),
  };
}

function load(target: LoadTarget, connections: number, seconds: number) {
  return autocannon({
    url: target.url,
    method: "GET",
    headers: target.headers ?? {},
    connections,
    pipelining: 1,
    duration: seconds,
    // The servers under test run on this process's event loop; a load generator sharing that
    // loop would steal the very time being measured, so it gets a thread of its own.
    workers: 1,
  });
}

/**
 * Loads one target with GET requests for `seconds`. The event-loop figures describe this
 * process's main thread, which is where the benchmarks' in-process servers run (they include the
 * load generator's few milliseconds of start-up).
 */
export async function loadOnce(target: LoadTarget, connections: number, seconds: number): Promise<LoadResult> {
  const before = performance.eventLoopUtilization();
  const cpuBefore = threadCpuMicros();
  const result = await load(target, connections, seconds);
  const cpuMicros = threadCpuMicros() - cpuBefore;
  const loop = performance.eventLoopUtilization(before);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  const measuredSeconds = result.duration > 0 ? result.duration : seconds;
  return {
    requestsPerSecond: result.requests.total / measuredSeconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: result.latency.mean,
    completed: result.requests.total,
    seconds: measuredSeconds,
    errors: result.errors,
    non2xx: result.non2xx,
    statusCodes,
    eventLoopUtilization: loop.utilization,
    // `active` is in milliseconds.
    busyMicrosPerRequest: result.requests.total > 0 ? (loop.active * 1000) / result.requests.total : 0,
    cpuMicrosPerRequest: result.requests.total > 0 ? cpuMicros / result.requests.total : Number.NaN,
  };
}

/** The median of some numbers (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/**
 * One target's rounds as one result: requests over the summed time, latency medians of the
 * rounds' (percentiles cannot be merged exactly; with rounds of equal length the median is close),
 * mean latency weighted by requests, and the main thread's busy time over all of them.
 */
export function combineRounds(rounds: readonly LoadResult[]): LoadResult {
  const completed = rounds.reduce((sum, r) => sum + r.completed, 0);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const busyMicros = rounds.reduce((sum, r) => sum + r.busyMicrosPerRequest * r.completed, 0);
  const cpuMicros = rounds.reduce((sum, r) => sum + r.cpuMicrosPerRequest * r.completed, 0);
  const statusCodes: Record<string, number> = {};
  for (const round of rounds) {
    for (const [code, count] of Object.entries(round.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  return {
    requestsPerSecond: seconds > 0 ? completed / seconds : 0,
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    meanMs: completed > 0 ? rounds.reduce((sum, r) => sum + r.meanMs * r.completed, 0) / completed : 0,
    completed,
    seconds,
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    statusCodes,
    eventLoopUtilization: seconds > 0 ? rounds.reduce((sum, r) => sum + r.eventLoopUtilization * r.seconds, 0) / seconds : 0,
    busyMicrosPerRequest: completed > 0 ? busyMicros / completed : 0,
    cpuMicrosPerRequest: completed > 0 ? cpuMicros / completed : Number.NaN,
  };
}

/**
 * Loads the targets in alternating short rounds rather than one long run each, so that load from
 * elsewhere on a shared machine (which comes and goes over seconds) hits every target alike: each
 * target first gets an unmeasured warm-up (JIT, prepared statements), then every round loads each
 * target once for `roundSeconds`, the order reversed every other round (A B, B A, …) so neither
 * always runs first. Answers each target's rounds, in round order.
 */
export async function measureInRounds(
  targets: readonly LoadTarget[],
  settings: LoadSettings,
  onRound?: (round: number, results: readonly LoadResult[]) => void,
): Promise<LoadResult[][]> {
  for (const target of targets) await load(target, settings.connections, settings.warmupSeconds);
  const perTarget: LoadResult[][] = targets.map(() => []);
  for (let round = 0; round < settings.rounds; round++) {
    const order = targets.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    const results: LoadResult[] = [];
    for (const i of order) {
      const result = await loadOnce(targets[i] as LoadTarget, settings.connections, settings.roundSeconds);
      results[i] = result;
      perTarget[i]?.push(result);
    }
    onRound?.(round, results);
  }
  return perTarget;
}
