export interface RateLimitConfig {
  /** Sustained requests per minute per credential. */
  readonly perMinute: number;
  /** Requests a credential may send at once before the sustained rate applies. */
  readonly burst: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per credential, in memory. Several server instances each enforce the limit on
 * their own share of the traffic; that is deliberate, a limit is protection, not billing.
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #refillPerMs: number;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.#refillPerMs = config.perMinute / 60_000;
  }

  /** Takes one request's token; answers null when allowed, or the seconds to wait. */
  take(key: string): number | null {
    const now = this.now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.config.burst, updatedAt: now };
    bucket.tokens = Math.min(this.config.burst, bucket.tokens + (now - bucket.updatedAt) * this.#refillPerMs);
    bucket.updatedAt = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      if (this.#buckets.size > 100_000) this.#sweep(now);
      return null;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#refillPerMs / 1000));
  }

  /** Forgets full buckets so the map cannot grow without bound. */
  #sweep(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.#refillPerMs >= this.config.burst) this.#buckets.delete(key);
    }
  }
}
