import { Redis } from "@hocuspocus/extension-redis";
import {
  type afterStoreDocumentPayload,
  type beforeUnloadDocumentPayload,
  isTransactionOrigin,
  OutgoingMessage,
  type onChangePayload,
  type onStoreDocumentPayload,
} from "@hocuspocus/server";
import RedisClient from "ioredis";
import type { Logger } from "pino";

/** How long a store may hold a document's lock in Redis (it is released as soon as the store ends). */
const LOCK_TTL_MS = 5000;
/** How long a store waits for another instance's store of the same document to end: a bit more than the lock's TTL. */
const LOCK_RETRY_DELAY_MS = 50;
const LOCK_RETRIES = Math.ceil((LOCK_TTL_MS * 1.2) / LOCK_RETRY_DELAY_MS);
/** The longest a store waits for the lock at all, even while Redis answers slowly or not. */
const LOCK_WAIT_MS = LOCK_TTL_MS * 1.5;
/**
 * How long a document stays subscribed after its last connection left (a REST write's included),
 * so an instance that is loading it right now still gets its state (see `beforeUnloadDocument`).
 */
const LINGER_MS = 1000;

/**
 * Hocuspocus's own Redis extension (4.7), which relays document updates and awareness between
 * the instances that have a document open, with three changes for how Tandem uses it:
 *
 * - Updates are published as they are, in one hop, besides the extension's state-vector exchange
 *   (a SyncStep1 that peers answer with what each side misses, two hops, kept: Redis pub/sub is
 *   at-most-once, and the exchange repairs a lost message at the next change). An edit reaches
 *   the other instances without waiting for the exchange, and without its instance having to keep
 *   the document loaded for it.
 * - A store waits for another instance's store of the same document instead of skipping (the
 *   extension skips and unloads, trusting the other instance to store a state it may not have).
 *   If the lock cannot be had (Redis unreachable, a store hung), the store goes ahead without it:
 *   `DocumentStore.save` merges with the stored state, so a concurrent store loses nothing.
 * - Nobody waits for the extension's "let syncs finish" delays (after a local store, before an
 *   unload: a second per REST write): the document lingers subscribed in the background instead.
 *
 * Relayed updates are applied with the "redis" origin: they run no `beforeSync` (their size, depth
 * and quota were checked by the instance they came in through) and no store (that instance stores).
 */
export class RedisRelay extends Redis {
  #closing = false;

  constructor(
    url: string,
    prefix: string,
    private readonly logger: Logger,
  ) {
    super({
      createClient: () => new RedisClient(url),
      // Every key and channel starts with the server's prefix: `<prefix>:sync:<document>`,
      // `<prefix>:sync:<document>:lock` and `<prefix>:sync#reply:<instance>`.
      prefix: `${prefix}:sync`,
      lockTimeout: LOCK_TTL_MS,
    });
    // The extension's lock gives up at once (retryCount 0); ours waits for the other store to end.
    const Redlock = this.redlock.constructor as new (clients: Iterable<RedisClient>, settings: object) => Redis["redlock"];
    this.redlock = new Redlock([this.pub as RedisClient], { retryCount: LOCK_RETRIES, retryDelay: LOCK_RETRY_DELAY_MS, retryJitter: 20 });
    for (const client of [this.pub, this.sub]) {
      client.on("error", (error: Error) => this.logger.warn({ err: error }, "redis connection error (documents across instances)"));
    }
  }

  override async onChange(data: onChangePayload): Promise<void> {
    if (!(isTransactionOrigin(data.transactionOrigin) && data.transactionOrigin.source === "redis")) {
      const message = new OutgoingMessage(data.documentName).createSyncMessage().writeUpdate(data.update);
      // Sent now, not awaited: ioredis keeps commands in order, and a failed publish is repaired
      // by the state-vector exchange below.
      this.pub.publish(`${this.configuration.prefix}:${data.documentName}`, this.#frame(message.toUint8Array())).catch((error: unknown) => {
        this.logger.warn({ err: error, document: data.documentName }, "could not relay a document update");
      });
    }
    return super.onChange(data);
  }

  override async onStoreDocument(payload: onStoreDocumentPayload): Promise<void> {
    const { documentName } = payload;
    // Without a connection to Redis, waiting would only hold the store (and a REST write) up.
    if (this.pub.status !== "ready") {
      this.logger.warn({ document: documentName }, "storing a document without its lock: Redis is not connected (the store merges)");
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const locked = super.onStoreDocument(payload).then(
      () => "locked" as const,
      (error: unknown) => {
        // The extension's "another instance is storing" (a SkipFurtherHooksError) after our wait, or a Redis error.
        this.logger.warn({ err: error, document: documentName }, "storing a document without its lock (the store merges)");
        return "failed" as const;
      },
    );
    const gaveUp = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), LOCK_WAIT_MS);
    });
    // A lock acquired after the wait gave up is released by the document's next store, or expires.
    if ((await Promise.race([locked, gaveUp])) === "timeout") {
      this.logger.warn({ document: documentName, waitedMs: LOCK_WAIT_MS }, "storing a document without its lock (the store merges)");
    }
    clearTimeout(timer);
  }

  override async afterStoreDocument(payload: afterStoreDocumentPayload): Promise<void> {
    // Releases the lock; without the origin, the extension's wait after a local store is skipped.
    await super.afterStoreDocument({ ...payload, lastTransactionOrigin: undefined });
  }

  /**
   * The extension keeps a document loaded (and subscribed) a second after its last connection
   * left by making the unload wait; here the unload is called off (an error without a message,
   * which Hocuspocus does not log) and tried again a second later, so nobody waits. By then the
   * document may have been reloaded under its name: UnloadSafeHocuspocus unloads only the one it holds.
   */
  override async beforeUnloadDocument({ instance, document }: beforeUnloadDocumentPayload): Promise<void> {
    if (this.#closing || Date.now() - document.lastChangeTime >= LINGER_MS) return;
    setTimeout(() => void instance.unloadDocument(document), LINGER_MS).unref();
    throw new Error("");
  }

  /** At shutdown: documents unload at once, then the Redis connections close. */
  closing(): void {
    this.#closing = true;
  }

  async close(): Promise<void> {
    await this.onDestroy().catch(() => undefined);
  }

  /** The extension's message framing (its identifier first, so it ignores its own messages). */
  #frame(message: Uint8Array): Buffer {
    return Buffer.concat([this.messagePrefix, Buffer.from(message)]);
  }
}
