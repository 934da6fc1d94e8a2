import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { ServerConfig } from "../config";
import type { Logger } from "../logger";

/** A wake-up as it travels: the sending instance, and each grown log's key name with its new cursor. */
interface WakeMessage {
  i: string;
  k: [string, number][];
}

/**
 * Cross-instance wake-ups for open streams, over Redis pub/sub. Appending an event publishes its
 * log's key and new cursor (never the payload: the database stays the truth, followers read it
 * there) on one channel under the configured prefix; every instance's one subscriber connection
 * hears it and wakes its own followers of that key.
 *
 * Failure is never loss: a wake-up that cannot be sent (Redis down) is dropped, and each follower's
 * fallback tick reads the log's newest cursor anyway. ioredis reconnects by itself; on every
 * (re)connection this subscribes again and then asks for a resync, so followers read once more
 * whatever was appended while the connection was away.
 */
export class StreamWakeups {
  readonly #instance = randomUUID();
  readonly #channel: string;
  readonly #publisher: Redis;
  readonly #subscriber: Redis;
  #wake: (name: string, cursor: number) => void = () => {};
  #resync: () => void = () => {};
  #subscribedOnce = false;
  #down = false;
  #ready: Promise<void>;
  #closed = false;

  /** See {@link openStreamWakeups}. */
  constructor(
    RedisClient: typeof Redis,
    url: string,
    prefix: string,
    private readonly logger: Logger,
  ) {
    this.#channel = `${prefix}:streams:wake`;
    // A wake-up is worth sending now or never: no offline queue, so an outage holds no memory.
    this.#publisher = new RedisClient(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectionName: `${prefix}:streams-pub` });
    // Subscriptions are made here on each `ready` (below), which also tells when they are back.
    this.#subscriber = new RedisClient(url, {
      autoResubscribe: false,
      maxRetriesPerRequest: null,
      connectionName: `${prefix}:streams-sub`,
    });
    for (const connection of [this.#publisher, this.#subscriber]) connection.on("error", (error) => this.#failed(error));
    this.#subscriber.on("message", (channel: string, message: string) => {
      if (channel === this.#channel) this.#heard(message);
    });
    this.#ready = new Promise((resolve) => {
      this.#subscriber.on("ready", () => void this.#subscribe().then(resolve));
    });
  }

  /** Resolves once this instance hears wake-ups (tests and the benchmark wait for it). */
  ready(): Promise<void> {
    return this.#ready;
  }

  /** Where heard wake-ups go (another instance appended to the named log). */
  onWake(listener: (name: string, cursor: number) => void): void {
    this.#wake = listener;
  }

  /** Called after the subscription came back: wake-ups may have been missed meanwhile. */
  onResync(listener: () => void): void {
    this.#resync = listener;
  }

  /** Tells every other instance which logs grew. Never waits and never throws. */
  publish(grown: ReadonlyMap<string, number>): void {
    if (this.#closed || this.#publisher.status !== "ready") return;
    const message: WakeMessage = { i: this.#instance, k: [...grown] };
    this.#publisher.publish(this.#channel, JSON.stringify(message)).catch((error: unknown) => this.#failed(error));
  }

  async close(): Promise<void> {
    this.#closed = true;
    // A connection still trying to reach Redis has nothing to say goodbye to: drop it at once.
    await Promise.all(
      [this.#publisher, this.#subscriber].map((connection) =>
        connection.status === "ready" ? connection.quit().catch(() => connection.disconnect()) : connection.disconnect(),
      ),
    );
  }

  async #subscribe(): Promise<void> {
    try {
      await this.#subscriber.subscribe(this.#channel);
    } catch (error) {
      // The connection dropped again before the answer; the next `ready` tries again.
      this.#failed(error);
      return;
    }
    if (this.#down) this.logger.info("redis: stream wake-ups are back");
    this.#down = false;
    if (this.#subscribedOnce) this.#resync();
    this.#subscribedOnce = true;
  }

  #heard(raw: string): void {
    let message: WakeMessage;
    try {
      message = JSON.parse(raw) as WakeMessage;
    } catch {
      return;
    }
    // This instance told its own followers when it appended.
    if (message.i === this.#instance || !Array.isArray(message.k)) return;
    for (const [name, cursor] of message.k) {
      if (typeof name === "string" && typeof cursor === "number") this.#wake(name, cursor);
    }
  }

  /** One warning per outage (ioredis reports each failed reconnect); streams fall back to polling meanwhile. */
  #failed(error: unknown): void {
    if (this.#down || this.#closed) return;
    this.#down = true;
    this.logger.warn({ err: error }, "redis: stream wake-ups unavailable; streams fall back to polling the database");
  }
}

/** Cross-instance wake-ups when `config` has Redis (ioredis is loaded only then); none otherwise. */
export async function openStreamWakeups(
  config: Pick<ServerConfig, "redisUrl" | "redisPrefix">,
  logger: Logger,
): Promise<StreamWakeups | undefined> {
  if (!config.redisUrl) return undefined;
  const { Redis } = await import("ioredis");
  return new StreamWakeups(Redis, config.redisUrl, config.redisPrefix, logger);
}
