import type { SharedState } from "../../shared/shared-state";

/** A wake-up as it travels: the sending instance, and each grown log's key name with its new cursor. */
interface WakeMessage {
  i: string;
  k: [string, number][];
}

/** The shared-state channel wake-ups travel on (`<prefix>:signal:streams:wake` in Redis). */
const CHANNEL = "streams:wake";

/**
 * Cross-instance wake-ups for open streams, over the shared state's pub/sub (Redis, on the
 * instance's one pair of connections). Appending an event publishes its log's key and new cursor
 * (never the payload: the database stays the truth, followers read it there) on one channel;
 * every instance hears it and wakes its own followers of that key.
 *
 * Failure is never loss: a wake-up that cannot be sent (Redis down) is dropped, and each follower's
 * fallback tick reads the log's newest cursor anyway. ioredis reconnects and subscribes again by
 * itself; once it has, this asks for a resync, so followers read once more whatever was appended
 * while the connection was away.
 */
export class StreamWakeups {
  readonly #shared: SharedState;
  readonly #unsubscribe: () => void;
  readonly #unfollowReconnects: () => void;
  #wake: (name: string, cursor: number) => void = () => {};
  #resync: () => void = () => {};
  #closed = false;

  constructor(shared: SharedState) {
    this.#shared = shared;
    this.#unsubscribe = shared.subscribe(CHANNEL, (message) => this.#heard(message));
    this.#unfollowReconnects = shared.onReconnected(() => this.#resync());
  }

  /** Resolves once this instance hears wake-ups (tests and the benchmark wait for it). */
  ready(): Promise<void> {
    return this.#shared.subscribed();
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
    if (this.#closed) return;
    this.#shared.publish(CHANNEL, { i: this.#shared.instanceId, k: [...grown] } satisfies WakeMessage);
  }

  /** Stops hearing and sending wake-ups; the connections are the shared state's to close. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    this.#unfollowReconnects();
  }

  #heard(raw: unknown): void {
    const message = raw as Partial<WakeMessage> | null;
    // This instance told its own followers when it appended.
    if (!message || message.i === this.#shared.instanceId || !Array.isArray(message.k)) return;
    for (const entry of message.k) {
      if (!Array.isArray(entry)) continue;
      const [name, cursor] = entry as unknown[];
      if (typeof name === "string" && typeof cursor === "number") this.#wake(name, cursor);
    }
  }
}
