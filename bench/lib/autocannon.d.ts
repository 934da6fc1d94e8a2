/**
 * autocannon ships no TypeScript types; this declares only the part of its programmatic API the
 * benchmarks use, so a typo in an option or a result field is a compile error rather than `undefined`.
 */
declare module "autocannon" {
  interface Options {
    url: string;
    method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Runs the load generator in this many worker threads instead of on the caller's event loop. */
    workers?: number;
  }

  /** An HDR histogram summary; autocannon records latency in whole milliseconds. */
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    total?: number;
  }

  interface Result {
    /** Seconds actually run. */
    duration: number;
    /** Connection errors, timeouts included. */
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    /** Latency of 2xx responses only, in ms. */
    latency: Histogram;
    /** Requests completed per one-second sample; `total` is every completed request. */
    requests: Histogram & { total: number; sent: number };
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
