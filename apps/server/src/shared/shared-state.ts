import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { Redis } from "ioredis";
import { BurstyRateLimiter, type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { ServerConfig } from "../config";
import type { Logger } from "../logger";
import { redisOptionsFromUrl } from "./redis-url";

/**
 * What the server's instances must agree on and that is not the database's to hold: request
 * limits, counts of runs going, and "access changed" signals. Chosen once at start
 * (docs/scaling.md, "What is shared, and where"): with no `redisUrl` it lives in this process (one
 * instance, as before); with one, in Redis under `redisPrefix`, so every instance counts against
 * the same budgets and hears the same signals. Redis being down never fails a request: limits and
 * slots fall back to this process's own count, and signals to the database's access epoch, which
 * every instance polls (sync/connection-guard.ts).
 */
export interface SharedState {
  /** `memory` (one instance) or `redis` (several). */
  readonly kind: "memory" | "redis";
  /** This process's id, so a signal's sender can ignore its own. */
  readonly instanceId: string;
  /** A rate limit shared by every instance (`name` keeps different limits' keys apart). */
  limiter(name: string, limit: RateLimit): SharedLimiter;
  /**
   * Takes one of at most `max` slots under `key` (a user's runs going); answers the function that
   * gives it back, or null when all are taken. A slot is leased: one its instance never gave back
   * (it crashed) comes free on its own after {@link SLOT_LEASE_MS}.
   */
  acquireSlot(name: string, key: string, max: number): Promise<(() => void) | null>;
  /** Tells every instance (this one included) on `channel`; fire and forget. */
  publish(channel: string, message: unknown): void;
  /** Hears `channel`; answers the unsubscribe function. */
  subscribe(channel: string, listener: (message: unknown) => void): () => void;
  /** Resolves once every `subscribe` made so far hears what is published (a few ms with Redis). */
  subscribed(): Promise<void>;
  /**
   * Calls `listener` each time the connection to Redis came back and the subscriptions hear again:
   * what was published meanwhile was missed. Never called in one process. Answers the unsubscribe function.
   */
  onReconnected(listener: () => void): () => void;
  /**
   * With Redis: this instance's two connections to it, for the parts that speak Redis themselves
   * (the document relay), so an instance holds one pair in all. Commands on `client` fail at once
   * while Redis is away (no offline queue); `subscriber` queues its SUBSCRIBEs and makes them again
   * after a reconnect.
   */
  readonly redis?: RedisConnections;
  close(): Promise<void>;
}

export interface RedisConnections {
  readonly client: Redis;
  readonly subscriber: Redis;
  /** What every key and channel of this server's starts with (`redisPrefix`). */
  readonly prefix: string;
}

export interface RateLimit {
  /** Sustained requests per minute per key. */
  readonly perMinute: number;
  /** Requests a key may send at once before the sustained rate applies. */
  readonly burst: number;
}

export interface SharedLimiter {
  /** Spends one request of `key`'s budget; null when allowed, else the seconds to wait. */
  take(key: string): Promise<number | null>;
  /** Without spending: null while `key` is within its budget, else the seconds until it is again. */
  exhausted(key: string): Promise<number | null>;
}

/** How long a slot's lease runs, and how often a slot still held renews it (a third of that). */
export const SLOT_LEASE_MS = 30_000;

type WindowOptions = { keyPrefix: string; points: number; duration: number };

/**
 * A token bucket (`burst` at once, `perMinute` sustained) out of rate-limiter-flexible's fixed
 * windows, as its BurstyRateLimiter pairs them: a sustained window of about a second first, then a
 * burst window holding what is left of `burst` for as long as the sustained rate takes to earn a
 * whole burst. A key gets `burst` at once and the sustained rate all along, so a client that pauses
 * between bursts is never held to one window's count (a fixed window alone refused such a client for
 * up to the whole window).
 */
function bucketOf(name: string, limit: RateLimit, make: (options: WindowOptions) => RateLimiterAbstract): SharedLimiter {
  const perSecond = limit.perMinute / 60;
  const sustained =
    perSecond >= 1 ? { points: Math.round(perSecond), duration: 1 } : { points: 1, duration: Math.max(1, Math.round(1 / perSecond)) };
  const burst = {
    points: Math.max(1, limit.burst - sustained.points),
    duration: Math.max(1, Math.ceil((limit.burst * 60) / limit.perMinute)),
  };
  return new Limiter(make({ keyPrefix: `${name}:rate`, ...sustained }), make({ keyPrefix: `${name}:burst`, ...burst }));
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

class Limiter implements SharedLimiter {
  readonly #bucket: BurstyRateLimiter;

  constructor(
    private readonly sustained: RateLimiterAbstract,
    private readonly burst: RateLimiterAbstract,
  ) {
    this.#bucket = new BurstyRateLimiter(sustained, burst);
  }

  async take(key: string): Promise<number | null> {
    try {
      await this.#bucket.consume(key);
      return null;
    } catch (refusal) {
      if (refusal instanceof RateLimiterRes) return seconds(refusal.msBeforeNext);
      throw refusal;
    }
  }

  async exhausted(key: string): Promise<number | null> {
    const [sustained, burst] = await Promise.all([this.sustained.get(key), this.burst.get(key)]);
    // Spent when both windows are: a refused take counts one past each window's points.
    if (!sustained || !burst || sustained.consumedPoints <= this.sustained.points || burst.consumedPoints <= this.burst.points) return null;
    return seconds(Math.min(sustained.msBeforeNext, burst.msBeforeNext));
  }
}

/** Slots counted in this process: the one-instance store, and Redis's stand-in while it is down. */
class MemorySlots {
  readonly #held = new Map<string, number>();

  acquire(name: string, key: string, max: number): (() => void) | null {
    const id = `${name}\u0000${key}`;
    const count = this.#held.get(id) ?? 0;
    if (count >= max) return null;
    this.#held.set(id, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(id) ?? 1) - 1;
      if (left > 0) this.#held.set(id, left);
      else this.#held.delete(id);
    };
  }
}

class MemoryState implements SharedState {
  readonly kind = "memory";
  readonly instanceId = randomUUID();
  readonly #slots = new MemorySlots();
  readonly #events = new EventEmitter().setMaxListeners(0);

  limiter(name: string, limit: RateLimit): SharedLimiter {
    return bucketOf(name, limit, (options) => new RateLimiterMemory(options));
  }

  async acquireSlot(name: string, key: string, max: number) {
    return this.#slots.acquire(name, key, max);
  }

  publish(channel: string, message: unknown): void {
    // Delivered after the caller carries on, as Redis would.
    queueMicrotask(() => this.#events.emit(channel, message));
  }

  subscribe(channel: string, listener: (message: unknown) => void): () => void {
    this.#events.on(channel, listener);
    return () => this.#events.off(channel, listener);
  }

  async subscribed(): Promise<void> {}

  onReconnected(): () => void {
    return () => {};
  }

  async close(): Promise<void> {
    this.#events.removeAllListeners();
  }
}

/**
 * Takes a slot atomically: drops leases past their time, refuses when `max` are held, else adds
 * this one. KEYS[1] the slot set; ARGV now, lease end, max, slot id, key lifetime (ms).
 */
const ACQUIRE_SLOT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

class RedisState implements SharedState {
  readonly kind = "redis";
  readonly instanceId = randomUUID();
  readonly #client: Redis;
  readonly #subscriber: Redis;
  readonly #events = new EventEmitter().setMaxListeners(0);
  readonly #reconnected = new EventEmitter().setMaxListeners(0);
  readonly #fallbackSlots = new MemorySlots();
  readonly #renewals = new Set<NodeJS.Timeout>();
  #warned = 0;
  #subscriberReadyBefore = false;

  constructor(
    RedisClient: typeof Redis,
    url: string,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {
    // No offline queue: while Redis is away a command fails at once (and the fallback answers)
    // instead of holding the request until it is back.
    const options = { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false } as const;
    // Named, so `CLIENT LIST` shows whose they are: the instance's only two connections to Redis.
    const address = redisOptionsFromUrl(url);
    this.#client = new RedisClient({ ...address, ...options, connectionName: `${prefix}:commands` });
    // The subscriber queues its SUBSCRIBEs until connected, and ioredis subscribes again after a reconnect.
    this.#subscriber = new RedisClient({
      ...address,
      ...options,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
      connectionName: `${prefix}:subscriber`,
    });
    for (const connection of [this.#client, this.#subscriber]) connection.on("error", (error) => this.#warn(error, "redis"));
    // The subscriber also carries the document relay's channels (binary, its own listener): only
    // channels subscribed here are decoded.
    this.#subscriber.on("messageBuffer", (channelBuffer: Buffer, raw: Buffer) => {
      const channel = channelBuffer.toString();
      if (this.#events.listenerCount(channel) === 0) return;
      try {
        this.#events.emit(channel, JSON.parse(raw.toString()));
      } catch {
        // Not ours (the prefix is shared by mistake?): ignored.
      }
    });
    // ioredis subscribes again right after "ready" (the listener runs first); a PING queued behind
    // those SUBSCRIBEs answers once they are in effect.
    this.#subscriber.on("ready", () => {
      if (!this.#subscriberReadyBefore) {
        this.#subscriberReadyBefore = true;
        return;
      }
      setImmediate(() => {
        this.subscribed().then(
          () => this.#reconnected.emit("reconnected"),
          () => {},
        );
      });
    });
  }

  get redis(): RedisConnections {
    return { client: this.#client, subscriber: this.#subscriber, prefix: this.prefix };
  }

  /**
   * Waits (a few seconds at most) for both connections, so the first request already counts in
   * Redis; an instance that cannot reach it starts anyway, on the fallbacks, and joins when it can.
   */
  async ready(timeoutMs = 5000): Promise<void> {
    const connected = (connection: Redis) =>
      connection.status === "ready" ? Promise.resolve() : new Promise<void>((resolve) => connection.once("ready", () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.logger.warn("redis not reachable yet; starting on this instance's own limits");
        resolve();
      }, timeoutMs);
    });
    await Promise.race([Promise.all([connected(this.#client), connected(this.#subscriber)]), late]);
    clearTimeout(timer);
  }

  #key(...parts: string[]): string {
    return [this.prefix, ...parts].join(":");
  }

  /** At most one warning a minute: Redis down is logged, not a flood. */
  #warn(error: unknown, what: string): void {
    const now = Date.now();
    if (now - this.#warned < 60_000) return;
    this.#warned = now;
    this.logger.warn({ err: error }, `${what} unavailable: limits and slots count on this instance alone until it is back`);
  }

  limiter(name: string, limit: RateLimit): SharedLimiter {
    return bucketOf(
      name,
      limit,
      (options) =>
        new RateLimiterRedis({
          storeClient: this.#client,
          ...options,
          keyPrefix: this.#key("limit", options.keyPrefix),
          rejectIfRedisNotReady: true,
          // While Redis is down each instance enforces the limit on its own share of the traffic.
          insuranceLimiter: new RateLimiterMemory(options),
        }),
    );
  }

  async acquireSlot(name: string, key: string, max: number): Promise<(() => void) | null> {
    const setKey = this.#key("slots", name, key);
    const slotId = randomUUID();
    try {
      const now = Date.now();
      const taken = await this.#client.eval(ACQUIRE_SLOT, 1, setKey, now, now + SLOT_LEASE_MS, max, slotId, SLOT_LEASE_MS * 2);
      if (taken !== 1) return null;
    } catch (error) {
      this.#warn(error, "redis");
      return this.#fallbackSlots.acquire(name, key, max);
    }
    // Renewed while held, so a long run keeps its slot; a crashed instance stops renewing.
    const renewal = setInterval(() => {
      const until = Date.now() + SLOT_LEASE_MS;
      this.#client
        .multi()
        .zadd(setKey, "XX", until, slotId)
        .pexpire(setKey, SLOT_LEASE_MS * 2)
        .exec()
        .catch(() => {});
    }, SLOT_LEASE_MS / 3);
    renewal.unref();
    this.#renewals.add(renewal);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(renewal);
      this.#renewals.delete(renewal);
      // A release that cannot reach Redis is settled by the lease.
      this.#client.zrem(setKey, slotId).catch(() => {});
    };
  }

  publish(channel: string, message: unknown): void {
    this.#client.publish(this.#key("signal", channel), JSON.stringify(message)).catch((error) => this.#warn(error, "redis"));
  }

  subscribe(channel: string, listener: (message: unknown) => void): () => void {
    const full = this.#key("signal", channel);
    if (this.#events.listenerCount(full) === 0) this.#subscriber.subscribe(full).catch((error) => this.#warn(error, "redis"));
    this.#events.on(full, listener);
    return () => {
      this.#events.off(full, listener);
      if (this.#events.listenerCount(full) === 0) this.#subscriber.unsubscribe(full).catch(() => {});
    };
  }

  async subscribed(): Promise<void> {
    // Commands on a connection are answered in order: the PING's answer comes after the SUBSCRIBEs'.
    await this.#subscriber.ping();
  }

  onReconnected(listener: () => void): () => void {
    this.#reconnected.on("reconnected", listener);
    return () => this.#reconnected.off("reconnected", listener);
  }

  async close(): Promise<void> {
    for (const renewal of this.#renewals) clearInterval(renewal);
    this.#events.removeAllListeners();
    this.#reconnected.removeAllListeners();
    this.#subscriber.disconnect();
    await this.#client.quit().catch(() => this.#client.disconnect());
  }
}

/** The shared state `config` asks for: Redis when `redisUrl` is set, else this process. */
export async function openSharedState(config: Pick<ServerConfig, "redisUrl" | "redisPrefix">, logger: Logger): Promise<SharedState> {
  if (!config.redisUrl) return new MemoryState();
  // ioredis is loaded only for a server that shares its state through Redis.
  // ioredis is CommonJS: its class is the default export once bundled into the server's build, a
  // named one as well when Node loads it from node_modules.
  const ioredis = await import("ioredis");
  const Redis = (ioredis.Redis ?? ioredis.default) as typeof ioredis.Redis;
  const state = new RedisState(Redis, config.redisUrl, config.redisPrefix, logger);
  await state.ready();
  return state;
}
