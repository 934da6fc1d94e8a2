import { performance } from "node:perf_hooks";
import autocannon from "autocannon";

/** How hard and how long to load a target; the same settings are used for every target in a run. */
export interface LoadSettings {
  readonly connections: number;
  readonly warmupSeconds: number;
  readonly seconds: number;
}

export interface LoadTarget {
  readonly url: string;
  readonly headers?: Record<string, string>;
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  /** Latency of 2xx responses, whole milliseconds (autocannon's resolution). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Mean latency, to two decimals: more telling than p50 when that rounds to 0 or 1 ms. */
  readonly meanMs: number;
  readonly completed: number;
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
}

const DEFAULTS: LoadSettings = { connections: 10, warmupSeconds: 2, seconds: 10 };

/** A positive number from the environment, or the default; anything else is a mistake worth stopping for. */
function positiveFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** `BENCH_SECONDS`, `BENCH_WARMUP_SECONDS` and `BENCH_CONNECTIONS` override the defaults (10 s, 2 s, 10). */
export function loadSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  return {
    connections: Math.round(positiveFromEnv("BENCH_CONNECTIONS", DEFAULTS.connections, env)),
    warmupSeconds: positiveFromEnv("BENCH_WARMUP_SECONDS", DEFAULTS.warmupSeconds, env),
    seconds: positiveFromEnv("BENCH_SECONDS", DEFAULTS.seconds, env),
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
 * Loads one target with GET requests: a warm-up (so the JIT and the prepared-statement cache are
 * hot) whose numbers are discarded, then the measured run. The warm-up is a separate run rather
 * than autocannon's `warmup` option so that the event-loop figures cover the measured run alone
 * (plus the load generator's few milliseconds of start-up). They describe this process's main
 * thread, which is where the benchmarks' in-process servers run.
 */
export async function measure(target: LoadTarget, settings: LoadSettings): Promise<LoadResult> {
  await load(target, settings.connections, settings.warmupSeconds);
  const before = performance.eventLoopUtilization();
  const result = await load(target, settings.connections, settings.seconds);
  const loop = performance.eventLoopUtilization(before);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    meanMs: result.latency.mean,
    completed: result.requests.total,
    errors: result.errors,
    non2xx: result.non2xx,
    statusCodes,
    eventLoopUtilization: loop.utilization,
    // `active` is in milliseconds.
    busyMicrosPerRequest: result.requests.total > 0 ? (loop.active * 1000) / result.requests.total : 0,
  };
}
