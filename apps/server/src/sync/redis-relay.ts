import { Redis } from "@hocuspocus/extension-redis";
import {
  type afterLoadDocumentPayload,
  type afterStoreDocumentPayload,
  type beforeUnloadDocumentPayload,
  type Document,
  IncomingMessage,
  isTransactionOrigin,
  MessageType,
  OutgoingMessage,
  type onAwarenessUpdatePayload,
  type onChangePayload,
  type onStoreDocumentPayload,
} from "@hocuspocus/server";
import type RedisClient from "ioredis";
import type { Logger } from "pino";
import { applyAwarenessUpdate } from "y-protocols/awareness";
import type { SharedState } from "../shared/shared-state";
import { retryLaterOnOutage } from "./retry-later";

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
 * Relayed changes are stored by the instances that received them too, this long after they came
 * (or when the document unloads first): well after the instance they came in through has stored
 * them, and in time if it died first.
 */
const RELAYED_STORE_MS = 5000;

/** What this class uses of the extension's private parts (as in 4.7; scaling-sync.test.ts fails if they change). */
interface Internals {
  handleIncomingMessage(channel: Buffer, data: Buffer): Promise<void>;
  /** Documents subscribed, including those still loading (not yet in `instance.documents`). */
  documents: Map<string, Document>;
  /** Queues the document's state vector (a SyncStep1) for publishing at the end of this turn. */
  schedulePublish(documentName: string, document: Document): { syncStepPending: boolean };
  /** What `schedulePublish` queued, not sent yet. */
  pendingPublishes: Map<string, { cancel(): void }>;
}

/**
 * Hocuspocus's own Redis extension (4.7), which relays document updates and awareness between
 * the instances that have a document open, with three changes for how Tandem uses it:
 *
 * - Updates are published as they are, in one hop, and the extension's state-vector exchange (a
 *   SyncStep1 that peers answer with what each side misses, two hops) runs after each store
 *   instead of after each change. Redis pub/sub is at-most-once, so the exchange is kept: it
 *   repairs a lost message at the next store (within the store debounce of the next change). An
 *   edit reaches the other instances without waiting for the exchange, and without its instance
 *   having to keep the document loaded for it; and the peers no longer answer every keystroke
 *   with a diff of their own, work that sat in front of the relayed edit's broadcast there (about
 *   a third of what another instance added to an edit's latency, `npm run bench -- scale`).
 * - A store waits for another instance's store of the same document instead of skipping (the
 *   extension skips and unloads, trusting the other instance to store a state it may not have).
 *   If the lock cannot be had (Redis unreachable, a store hung), the store goes ahead without it:
 *   `DocumentStore.save` merges with the stored state, so a concurrent store loses nothing.
 * - Awareness from another instance is applied as it comes. Hocuspocus (4.7) passes it through a
 *   scratch Awareness for its `beforeHandleAwareness` hook (which the instance it came in through
 *   ran) and re-encodes only the clients left in it, so a removal (an editor leaving) never
 *   reached the other instances' editors, whose cursors stayed until awareness timed out (30 s).
 * - Nobody waits for the extension's "let syncs finish" delays (after a local store, before an
 *   unload: a second per REST write): the document lingers subscribed in the background instead.
 *
 * Relayed updates are applied with the "redis" origin: they run no `beforeSync` (their size, depth
 * and quota were checked by the instance they came in through) and no store of their own (that
 * instance stores them). Should it die before it does (a `kill -9` within its store debounce), the
 * others would hold them in memory only; so each instance also stores a document it received
 * changes for, a few seconds later or when unloading it, whichever comes first (stores merge).
 */
export class RedisRelay extends Redis {
  #closing = false;
  /** Documents with relayed changes this instance has not stored yet: the timer of that store. */
  readonly #relayedStores = new Map<string, NodeJS.Timeout>();

  readonly #unfollowReconnects: () => void;
  readonly #onMessage: (channel: Buffer, data: Buffer) => void;

  /** `shared` must be on Redis: the relay speaks on its connections, an instance's one pair. */
  constructor(
    shared: SharedState,
    private readonly logger: Logger,
  ) {
    const { redis } = shared;
    if (!redis) throw new Error("the document relay needs the shared state on Redis");
    // The extension asks for two clients, its publisher then its subscriber: the shared ones.
    const clients: RedisClient[] = [redis.client, redis.subscriber];
    super({
      createClient: () => clients.shift() as RedisClient,
      // Every key and channel starts with the server's prefix: `<prefix>:sync:<document>`,
      // `<prefix>:sync:<document>:lock` and `<prefix>:sync#reply:<instance>`.
      prefix: `${redis.prefix}:sync`,
      lockTimeout: LOCK_TTL_MS,
    });
    // The extension's lock gives up at once (retryCount 0); ours waits for the other store to end.
    const Redlock = this.redlock.constructor as new (clients: Iterable<RedisClient>, settings: object) => Redis["redlock"];
    this.redlock = new Redlock([this.pub as RedisClient], { retryCount: LOCK_RETRIES, retryDelay: LOCK_RETRY_DELAY_MS, retryJitter: 20 });
    // Relayed awareness is applied here; every other message of ours as the extension does. The
    // subscriber also carries the shared state's signals: only this relay's channels are read.
    const extension = this as unknown as Internals;
    const handle = extension.handleIncomingMessage;
    const ours = Buffer.from(this.configuration.prefix);
    this.sub.off("messageBuffer", handle);
    this.#onMessage = (channel: Buffer, data: Buffer) => {
      if (channel.compare(ours, 0, ours.length, 0, ours.length) !== 0) return;
      if (this.#appliedAwareness(data, extension.documents)) return;
      handle(channel, data).catch((error: unknown) => this.logger.warn({ err: error }, "could not apply a relayed document message"));
    };
    this.sub.on("messageBuffer", this.#onMessage);
    // Updates published while Redis was away were lost (no offline queue): once it is back, every
    // open document runs the state-vector exchange, so each side gets what it missed.
    this.#unfollowReconnects = shared.onReconnected(() => {
      for (const [name, document] of this.instance?.documents ?? []) extension.schedulePublish(name, document).syncStepPending = true;
    });
  }

  /** Applies a relayed awareness message (answering true), or answers false for any other message. */
  #appliedAwareness(data: Buffer, loading: Map<string, Document>): boolean {
    try {
      const identifierLength = data[0] ?? 0;
      if (data.toString("utf-8", 1, identifierLength + 1) === this.configuration.identifier) return false;
      const message = new IncomingMessage(data.subarray(identifierLength + 1));
      const documentName = message.readVarString();
      if (message.readVarUint() !== MessageType.Awareness) return false;
      // A document still loading (waiting for the other instances' state) takes their awareness too.
      const document = loading.get(documentName) ?? this.instance.documents.get(documentName);
      if (document) applyAwarenessUpdate(document.awareness, message.readVarUint8Array(), this.redisTransactionOrigin);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether Redis answers: without it, documents not open here cannot be opened. */
  get reachable(): boolean {
    return this.pub.status === "ready" && this.sub.status === "ready";
  }

  /**
   * A load fails here when Redis is unreachable (subscribing gives up after ioredis's retries).
   * Hocuspocus then drops the document without destroying it, and its awareness timer would keep
   * the process from ever exiting: destroy it.
   */
  override async afterLoadDocument(payload: afterLoadDocumentPayload): Promise<void> {
    try {
      // Subscribing failed (Redis unreachable): the client is told to come back, not refused.
      await retryLaterOnOutage(
        payload.context,
        async () => {
          // The shared subscriber would wait for Redis to come back, however long: fail the load now.
          if (!this.reachable) throw new Error("Redis, which relays documents between instances, is unreachable");
          await super.afterLoadDocument(payload);
        },
        () => true,
      );
    } catch (error) {
      payload.document.destroy();
      throw error;
    }
  }

  override async onChange(data: onChangePayload): Promise<void> {
    if (isTransactionOrigin(data.transactionOrigin) && data.transactionOrigin.source === "redis") {
      const { documentName, document } = data;
      if (!this.#relayedStores.has(documentName)) {
        const timer = setTimeout(() => void this.#storeRelayed(document), RELAYED_STORE_MS);
        timer.unref();
        this.#relayedStores.set(documentName, timer);
      }
    } else {
      const message = new OutgoingMessage(data.documentName).createSyncMessage().writeUpdate(data.update);
      // Sent now, not awaited: ioredis keeps commands in order, and a failed publish is repaired
      // by the state-vector exchange below.
      this.pub.publish(this.#channel(data.documentName), this.#frame(message.toUint8Array())).catch((error: unknown) => {
        this.logger.warn({ err: error, document: data.documentName }, "could not relay a document update");
      });
    }
    // Not the extension's onChange: its state-vector exchange follows the store (afterStoreDocument).
  }

  /**
   * The extension publishes awareness only while the document has connections here, checked again
   * when it flushes, a moment later: the removal of a leaving editor's cursor (sent by its provider
   * as it closes, or made by Hocuspocus as the connection goes) was lost whenever that editor was
   * the last one here, and its cursor stayed on the other instances until awareness timed out there
   * (30 s). Removals are published at once, whoever is left.
   */
  override async onAwarenessUpdate(payload: onAwarenessUpdatePayload): Promise<void> {
    const { documentName, awareness, removed, transactionOrigin } = payload;
    // Awareness relayed from another instance is not sent back.
    if (isTransactionOrigin(transactionOrigin) && transactionOrigin.source === "redis") return;
    if (removed.length > 0) {
      const message = new OutgoingMessage(documentName).createAwarenessUpdateMessage(awareness, removed);
      this.pub.publish(this.#channel(documentName), this.#frame(message.toUint8Array())).catch((error: unknown) => {
        this.logger.warn({ err: error, document: documentName }, "could not relay an awareness removal");
      });
    }
    return super.onAwarenessUpdate(payload);
  }

  override async onStoreDocument(payload: onStoreDocumentPayload): Promise<void> {
    const { documentName } = payload;
    // Without a connection to Redis, waiting would only hold the store (and a REST write) up.
    if (!this.reachable) {
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
    // The repair exchange: peers answer with what this instance misses, and ask for what they miss.
    (this as unknown as Internals).schedulePublish(payload.documentName, payload.document).syncStepPending = true;
  }

  /**
   * The extension keeps a document loaded (and subscribed) a second after its last connection
   * left by making the unload wait; here the unload is called off (an error without a message,
   * which Hocuspocus does not log) and tried again a second later, so nobody waits. By then the
   * document may have been reloaded under its name: UnloadSafeHocuspocus unloads only the one it holds.
   */
  override async beforeUnloadDocument({ instance, document }: beforeUnloadDocumentPayload): Promise<void> {
    if (this.#closing || Date.now() - document.lastChangeTime >= LINGER_MS) {
      // Relayed changes not stored here yet are stored before the document goes.
      if (this.#relayedStores.has(document.name)) await this.#storeRelayed(document);
      return;
    }
    setTimeout(() => void instance.unloadDocument(document), LINGER_MS).unref();
    throw new Error("");
  }

  /** Stores a document for the relayed changes it received (through Hocuspocus: lock, store, views). */
  async #storeRelayed(document: Document): Promise<void> {
    const { name } = document;
    clearTimeout(this.#relayedStores.get(name));
    this.#relayedStores.delete(name);
    const { instance } = this;
    if (instance.documents.get(name) !== document) return;
    await instance.storeDocumentHooks(
      document,
      {
        instance,
        document,
        documentName: name,
        clientsCount: document.getConnectionsCount(),
        lastContext: {},
        lastTransactionOrigin: this.redisTransactionOrigin,
      },
      true,
    );
  }

  /** At shutdown: documents unload at once, then the Redis connections close. */
  closing(): void {
    this.#closing = true;
  }

  /** Hocuspocus's own server calls this at its end: the extension's would quit the shared connections. */
  override async onDestroy(): Promise<void> {
    await this.close();
  }

  /** Stops relaying. The connections are the shared state's, closed after this (never the extension's quit). */
  async close(): Promise<void> {
    for (const timer of this.#relayedStores.values()) clearTimeout(timer);
    this.#relayedStores.clear();
    this.#unfollowReconnects();
    const extension = this as unknown as Internals;
    for (const pending of extension.pendingPublishes.values()) pending.cancel();
    extension.pendingPublishes.clear();
    this.sub.off("messageBuffer", this.#onMessage);
    const channels = [
      `${this.configuration.prefix}#reply:${this.configuration.identifier}`,
      ...[...extension.documents.keys()].map((name) => this.#channel(name)),
    ];
    // Not awaited: with Redis gone it would wait for ever; the shared state's close drops it.
    this.sub.unsubscribe(...channels).catch(() => {});
  }

  /** The document's channel, as the extension names it. */
  #channel(documentName: string): string {
    return `${this.configuration.prefix}:${documentName}`;
  }

  /** The extension's message framing (its identifier first, so it ignores its own messages). */
  #frame(message: Uint8Array): Buffer {
    return Buffer.concat([this.messagePrefix, Buffer.from(message)]);
  }
}
