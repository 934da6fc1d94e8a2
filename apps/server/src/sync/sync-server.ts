import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Hocuspocus } from "@hocuspocus/server";
import { UnloadSafeHocuspocus } from "@tandem/unload-safe-hocuspocus";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import { WebSocketServer } from "ws";
import type * as Y from "yjs";
import type { Authenticator } from "../auth/authenticator";
import type { Principal } from "../auth/principal";
import type { ServerConfig } from "../config";
import type { Database } from "../db/database";
import type { Schema } from "../db/schema";
import { storageUnavailable } from "../http/errors";
import { sharedFolders } from "../people/sharing/access";
import type { SharedState } from "../shared/shared-state";
import { reconcileViews, updateDocumentViews } from "../workspace/views/document-views";
import { claimNotes, noteOwner } from "../workspace/views/note-ownership";
import { ViewScheduler } from "../workspace/views/view-scheduler";
import { ConnectionGuard, type GuardedContext } from "./connection-guard";
import { AccessRefused, credentialAccess, credentialKey } from "./credential-access";
import { type DocumentAccess, documentAccess } from "./document-access";
import { DocumentRepaired, DocumentStore } from "./document-store";
import { DurableStore } from "./durable-store";
import type { RedisRelay } from "./redis-relay";
import { retryLaterContext, retryLaterOnOutage } from "./retry-later";
import { StorageQuota } from "./storage-quota";
import { updateLimits } from "./update-limits";
import { toBytes, toFetchRequest } from "./websocket-request";
import { YjsEndpoint } from "./yjs-endpoint";

export const SYNC_PATH = "/sync";

/** What a sync connection carries once its token is verified. */
export interface SyncContext extends GuardedContext {
  userId: number;
}

/**
 * How long after the last edit over sync a document is written to storage, and the longest a
 * stream of edits can postpone that write: together, the bound on how much a crash can lose.
 */
export const STORE_DEBOUNCE_MS = 500;
export const STORE_MAX_DEBOUNCE_MS = 2000;

/**
 * The sync hub: Hocuspocus on our own `ws` server, sharing the HTTP server's port at `/sync`.
 * A connection's token is a credential; which documents a principal may open, and whether
 * read-only, is decided per document name (see document-access.ts), and decided again for open
 * connections whenever access may have been taken away (see connection-guard.ts). Documents are
 * stored in the database, and the SQL views follow each store; REST writes go through
 * {@link SyncServer.change} so open editors see them live.
 */
/**
 * What the sync hub needs: the first parts of the context (`AppContext`), which it is built before the
 * rest of and then becomes part of. Spelled out rather than picked from `AppContext` so the context
 * and the hub do not import each other.
 */
export interface SyncDependencies {
  readonly config: ServerConfig;
  readonly logger: Logger;
  readonly database: Database;
  readonly db: Kysely<Schema>;
  readonly authenticator: Authenticator;
  readonly shared: SharedState;
}

export class SyncServer {
  readonly hocuspocus: Hocuspocus<SyncContext>;
  readonly #sockets: WebSocketServer;
  /** `/yjs/<document name>`: the same documents for y-websocket clients. */
  readonly yjs: YjsEndpoint;

  readonly store: DocumentStore;
  readonly views: ViewScheduler;
  readonly connections: ConnectionGuard;
  readonly quota: StorageQuota;
  readonly #durable: DurableStore;
  /** With Redis configured: relays updates and awareness to the other instances, and locks stores. */
  readonly #relay: RedisRelay | undefined;

  /** `relay`: with Redis configured, see {@link createRedisRelay} (loaded only then). */
  constructor(
    private readonly context: SyncDependencies,
    relay?: RedisRelay,
  ) {
    const { maxDocumentBytes, userQuotaBytes } = context.config;
    // A message carries one update plus a few bytes of framing; anything bigger is refused unread.
    const maxPayload = maxDocumentBytes + 64 * 1024;
    this.#sockets = new WebSocketServer({ noServer: true, maxPayload });
    this.store = new DocumentStore(context.db);
    this.quota = new StorageQuota(context.db, { maxDocumentBytes, userQuotaBytes });
    // A store that failed is retried by DurableStore; its success runs afterStoreDocument, so the views follow.
    this.#durable = new DurableStore(this.store, context.logger, (name, bytes) => this.quota.measured(name, bytes));
    this.views = new ViewScheduler((name) => updateDocumentViews(context.db, this.store, name));
    this.#relay = relay;
    this.hocuspocus = new UnloadSafeHocuspocus<SyncContext>({
      name: "tandem",
      quiet: true,
      debounce: STORE_DEBOUNCE_MS,
      maxDebounce: STORE_MAX_DEBOUNCE_MS,
      onAuthenticate: async ({ token, documentName, connectionConfig, context: connectionContext }) => {
        const epoch = this.connections.epoch;
        // The database unreachable is no refusal: the client is told to come back (retry-later.ts).
        const { principal, access } = await retryLaterOnOutage(connectionContext, async () => {
          const principal = await this.context.authenticator.verify(token);
          return { principal, access: principal && (await this.accessOf(principal, documentName)) };
        });
        if (!principal) throw new AccessRefused("unauthorized", documentName);
        if (!access) throw new AccessRefused("forbidden", documentName);
        connectionConfig.readOnly = access === "read";
        return { userId: principal.userId, token, epoch } satisfies SyncContext;
      },
      connected: async ({ context }) => {
        this.connections.admitted(context);
      },
      onLoadDocument: async ({ documentName, document, context: connectionContext }) => {
        const bytes = await retryLaterOnOutage(connectionContext, () => this.store.loadInto(documentName, document));
        this.quota.measured(documentName, bytes);
      },
      // Views follow what is stored, never run ahead of it: a crash cannot leave them showing
      // edits the documents lost. One that fails is recomputed at the next store or start.
      afterStoreDocument: async ({ documentName }) => {
        await this.views.run(documentName).catch((error: unknown) => {
          context.logger.error({ err: error, document: documentName }, "view update failed");
        });
      },
      // The relay's hooks run first (priority): its lock is held around the store, and its hold on
      // an unload comes before DurableStore's.
      extensions: [...(this.#relay ? [this.#relay] : []), updateLimits(this.quota, context.logger), this.#durable.extension()],
    });
    this.yjs = new YjsEndpoint(this.hocuspocus, {
      maxPayload,
      limits: {
        socketsPerCredential: context.config.yjsSocketsPerCredential,
        awarenessBurst: context.config.yjsAwarenessBurst,
        awarenessPerSecond: context.config.yjsAwarenessPerSecond,
      },
      identify: async (token) => {
        const principal = await context.authenticator.verify(token);
        return principal && credentialKey(principal);
      },
      shared: context.shared,
      logger: context.logger,
    });
    this.connections = new ConnectionGuard(this.hocuspocus, context.db, (token, name) => this.accessFor(token, name), context.logger);
  }

  /** Brings views stored before a crash up to date, then starts watching access; call once before serving. */
  async start(): Promise<void> {
    const reconciled = await reconcileViews(this.context.db, this.store, (name, error) =>
      this.context.logger.error({ err: error, document: name }, "view update failed"),
    );
    if (reconciled > 0) this.context.logger.info({ documents: reconciled }, "views brought up to date with stored documents");
    await this.connections.start();
  }

  /** What a principal may do with a document: the credential's scopes and the user's own access, whichever is less. */
  private async accessOf(principal: Principal, documentName: string): Promise<DocumentAccess | null> {
    const allowed = credentialAccess(principal, documentName);
    const access = allowed && (await documentAccess(principal.userId, documentName, this));
    if (!allowed || !access) return null;
    return allowed === "read" ? "read" : access;
  }

  /** An open socket's re-check: its credential as it opened with it (an access token past its expiry included). */
  private async accessFor(token: string, documentName: string): Promise<DocumentAccess | null> {
    const principal = await this.context.authenticator.verify(token, { acceptExpired: true });
    return principal ? this.accessOf(principal, documentName) : null;
  }

  noteOwner(uuid: string): Promise<number | undefined> {
    return noteOwner(this.context.db, uuid);
  }

  async claimNote(userId: number, uuid: string): Promise<number | undefined> {
    await claimNotes(this.context.db, userId, [uuid]);
    return noteOwner(this.context.db, uuid);
  }

  async sharedNoteRole(userId: number, uuid: string): Promise<"editor" | "viewer" | undefined> {
    const note = await this.context.db.selectFrom("notes").select("folder_id").where("uuid", "=", uuid).executeTakeFirst();
    if (!note || note.folder_id === null) return undefined;
    return (await sharedFolders(this.context.db, userId)).get(note.folder_id)?.role;
  }

  /** The live document if it is open, otherwise a copy read from storage. */
  async getDoc(name: string): Promise<Y.Doc> {
    return this.hocuspocus.documents.get(name) ?? this.store.loadDoc(name);
  }

  /**
   * Applies a change to a document as one transaction, through Hocuspocus so every connected
   * client receives it, and answers once the document is stored and its views show the change
   * (disconnecting stores it, and the views follow the store).
   * Yjs cannot roll a transaction back, so `apply` must check everything before it changes anything.
   */
  async change<T>(name: string, userId: number, apply: (doc: Y.Doc) => T): Promise<T> {
    // Opening a document not open here subscribes to it in Redis first: without Redis, say so at once.
    if (this.#relay && !this.#relay.reachable && !this.hocuspocus.documents.has(name)) {
      throw storageUnavailable("Redis, which relays documents between instances, is unreachable, so nothing was changed. Retry later");
    }
    // A document whose stored state had to be repaired fails its first load; the second succeeds.
    const open = () => this.hocuspocus.openDirectConnection(name, { userId });
    const connection = await open().catch((error: unknown) => {
      if (error instanceof DocumentRepaired) return open();
      throw error;
    });
    let result: T | undefined;
    try {
      await connection.transact((doc) => {
        result = apply(doc);
      });
    } finally {
      // Disconnecting stores the document before it resolves: the write is durable, unless
      // storage failed, when the change stays in memory and is stored again later.
      await connection.disconnect();
    }
    if (this.#durable.isUnsaved(name)) {
      throw storageUnavailable("The change could not be stored; it is kept in memory and stored when storage recovers. Retry later");
    }
    return result as T;
  }

  /** Takes over an HTTP upgrade aimed at the sync path. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#sockets.handleUpgrade(request, socket, head, (websocket) => {
      const connection = this.hocuspocus.handleConnection(websocket, toFetchRequest(request), retryLaterContext(websocket) as never);
      websocket.on("message", (data) => connection.handleMessage(toBytes(data)));
      websocket.on("close", (code, reason) => connection.handleClose({ code, reason: reason.toString() }));
      websocket.on("error", (error) => this.context.logger.debug({ err: error }, "sync socket error"));
    });
  }

  /** Closes every connection and stores every document before answering. */
  async close(): Promise<void> {
    await this.connections.stop();
    await this.#durable.close();
    this.#relay?.closing();
    this.hocuspocus.flushPendingStores();
    if (this.hocuspocus.getDocumentsCount() > 0) {
      await new Promise<void>((resolve) => {
        this.hocuspocus.configuration.extensions.push({
          afterUnloadDocument: async ({ instance }) => {
            if (instance.getDocumentsCount() === 0) resolve();
          },
        });
        this.hocuspocus.closeConnections();
        // Documents the relay kept loaded a moment after their last connection left.
        for (const document of this.hocuspocus.documents.values()) void this.hocuspocus.unloadDocument(document);
      });
    }
    await this.#relay?.close();
    await this.yjs.close();
    for (const websocket of this.#sockets.clients) websocket.terminate();
    await new Promise<void>((resolve) => this.#sockets.close(() => resolve()));
    await this.views.flush();
  }
}

/**
 * The relay the shared state asks for: none without Redis; with it, Hocuspocus's Redis extension on the
 * shared state's connections, loaded only then.
 */
export async function createRedisRelay({ shared, logger }: Pick<SyncDependencies, "shared" | "logger">): Promise<RedisRelay | undefined> {
  if (!shared.redis) return undefined;
  const { RedisRelay } = await import("./redis-relay");
  return new RedisRelay(shared, logger);
}
