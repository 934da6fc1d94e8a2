/**
 * Latency of one request or operation at a time: no queueing, no saturation, so each sample is the
 * cost of the operation itself plus the round trip (compare with a trivial request measured the
 * same way, which is the floor). Timing uses the monotonic high-resolution clock.
 */
import http from "node:http";

export interface LatencyStats {
  readonly count: number;
  readonly minMs: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

export function summarize(samplesMs: readonly number[]): LatencyStats {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    minMs: sorted[0] ?? Number.NaN,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p95Ms: percentile(sorted, 95),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
    meanMs: sorted.length > 0 ? sum / sorted.length : Number.NaN,
  };
}

/** Runs `operation` `warmup` times unmeasured, then `count` times one after another, timing each. */
export async function sampleSequential(operation: () => Promise<void>, settings: { warmup: number; count: number }): Promise<LatencyStats> {
  for (let i = 0; i < settings.warmup; i++) await operation();
  const samples: number[] = [];
  for (let i = 0; i < settings.count; i++) {
    const started = performance.now();
    await operation();
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

/** Milliseconds with as many decimals as are meaningful at that size. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  return ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0);
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * A minimal HTTP client over one keep-alive connection (node:http, not fetch: less client-side
 * overhead per request, so the figures are closer to the server's own time). Each request reads
 * the whole response body, as a real client would.
 */
export class KeepAliveClient {
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(
    private readonly baseUrl: string,
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  request(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { ...this.headers };
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const request = http.request(new URL(path, this.baseUrl), { method, headers, agent: this.#agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      });
      request.on("error", reject);
      request.end(payload);
    });
  }

  /** A request that must answer `expected`; anything else stops the benchmark (it would measure errors). */
  async expect(expected: number, method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    const answer = await this.request(method, path, body);
    if (answer.status !== expected) {
      throw new Error(`${method} ${path} answered ${answer.status}, expected ${expected}: ${answer.body.slice(0, 300)}`);
    }
    return answer;
  }

  close(): void {
    this.#agent.destroy();
  }
}
