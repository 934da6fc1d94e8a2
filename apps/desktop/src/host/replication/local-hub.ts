import { randomBytes, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { HocuspocusProvider } from "@hocuspocus/provider";
import type { Hocuspocus } from "@hocuspocus/server";
import { parseDocName } from "@tandem/core";
import { UnloadSafeHocuspocus } from "@tandem/unload-safe-hocuspocus";
import { type RawData, WebSocketServer } from "ws";
import * as Y from "yjs";
import type { LocalDocumentStore, StoredDocument } from "../store/document-store";
import { compactDocument } from "./compact-document";

/** Stored documents read per query (and per turn of the event loop) by {@link LocalHub.readDocuments}. */
const READ_CHUNK = 50;

/** As on the server: stored 0.5 s after the last change, at most 2 s after the first of a stream. */
const STORE_DEBOUNCE_MS = 500;
const STORE_MAX_DEBOUNCE_MS = 2000;

export interface LocalHubOptions {
  /** The signed-in user: the only one whose workspace and todos the hub serves. */
  readonly userId: number;
  /** That user's documents on disk. */
  readonly store: LocalDocumentStore;
  /** Called (synchronously, often) when a document gains or loses unconfirmed local changes. */
  readonly onUnsyncedChange?: () => void;
  /** Called when the renderer opens a document (`inUse` true) or closes its connection to one. */
  readonly onDocumentUse?: (name: string, inUse: boolean) => void;
  /** Called after a document was stored (it is still loaded). */
  readonly onStored?: (name: string, doc: Y.Doc) => void;
  /**
   * Tests only: awaited before a document is loaded, to play a slow host (a busy machine) whose
   * documents reach the renderer late, at the moment a test chooses.
   */
  readonly beforeLoad?: ((name: string) => Promise<void> | undefined) | undefined;
}

/**
 * The origin of updates replication applies from the server's side without a provider (see
 * {@link LocalHub.applyRemote}): like a provider's, they are not local changes.
 */
const FROM_SERVER = Symbol("from the server");

/** A document held open in the hub (replication holds one per document it replicates). */
export type HubConnection = Awaited<ReturnType<Hocuspocus["openDirectConnection"]>>;

/** A stored document read ahead of opening it, and when: it is stale if the hub stored the document since. */
export interface PreloadedDocument {
  readonly stored: StoredDocument;
  readonly readAfterWrite: number;
}

/** What replication hands the hub with a document it opens. */
interface HubContext {
  readonly preloaded?: PreloadedDocument | undefined;
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  return data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function sameSecret(given: string, expected: Buffer): boolean {
  const bytes = Buffer.from(given);
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

/**
 * The host's own sync server, for the renderer: Hocuspocus on 127.0.0.1 (random port) that
 * accepts only this session's random secret, serves the signed-in user's documents from the
 * local database and stores every change there. Replication binds to the same documents, so the
 * renderer sees remote edits live and its edits flow to the server, online or not.
 *
 * Note documents: any well-formed `note:<uuid>` is served. The renderer creates a note offline by
 * adding it to the workspace document and opening its document, possibly before the hub has seen
 * that workspace change; only notes the workspace lists are ever replicated, so an unlisted note
 * stays on this machine, in this account's rows.
 */
export class LocalHub {
  readonly hocuspocus: Hocuspocus;
  /** `ws://127.0.0.1:<port>` */
  readonly url: string;
  /** This session's secret; the renderer presents it as its token. */
  readonly token: string;
  readonly #secret: Buffer;
  readonly #sockets: WebSocketServer;
  readonly #store: LocalDocumentStore;
  readonly #options: LocalHubOptions;
  /**
   * Documents holding local changes the server has not confirmed, open or not: it starts from the
   * stored marks, so the status counts them without opening every document (replication opens notes
   * only while the server is reachable).
   */
  readonly #unsynced: Set<string>;
  /** Stores so far, and the number of each document's latest store (to tell a preloaded copy is stale). */
  #writes = 0;
  readonly #lastWrite = new Map<string, number>();
  /**
   * Open documents changed since they were loaded or last stored, and those loaded without a stored
   * copy: only these are stored, so a note opened and closed unchanged is not written again.
   */
  readonly #dirty = new Set<string>();
  /** Count of local changes so far, and the count at each document's latest (see {@link localChangeMark}). */
  #localChanges = 0;
  readonly #lastLocalChange = new Map<string, number>();
  /** Updates from the server being merged into stored copies ({@link applyRemote}); a load waits for them. */
  readonly #merging = new Map<string, Promise<void>>();
  #failedMerges = 0;
  #closed = false;

  private constructor(options: LocalHubOptions, sockets: WebSocketServer, token: string, unsynced: readonly string[]) {
    this.#options = options;
    this.#unsynced = new Set(unsynced);
    this.#store = options.store;
    this.#sockets = sockets;
    this.token = token;
    this.#secret = Buffer.from(token);
    this.url = `ws://127.0.0.1:${(sockets.address() as AddressInfo).port}`;
    // Replication opens and closes notes often: a late unload must not leak a reopened note.
    this.hocuspocus = new UnloadSafeHocuspocus({
      name: "tandem-desktop",
      quiet: true,
      debounce: STORE_DEBOUNCE_MS,
      maxDebounce: STORE_MAX_DEBOUNCE_MS,
      onAuthenticate: async ({ token: given, documentName }) => {
        if (this.#closed || !sameSecret(given, this.#secret)) throw new Error("invalid token");
        if (!this.servesDocument(documentName)) throw new Error(`no access to ${documentName}`);
      },
      onLoadDocument: async ({ documentName, document, context }) => {
        await this.#options.beforeLoad?.(documentName);
        await this.#merging.get(documentName)?.catch(() => {});
        const preloaded = (context as HubContext | undefined)?.preloaded;
        const fresh = preloaded && (this.#lastWrite.get(documentName) ?? 0) <= preloaded.readAfterWrite;
        const stored = fresh ? preloaded.stored : await this.#store.load(documentName);
        if (!stored) {
          this.#dirty.add(documentName);
          return;
        }
        Y.applyUpdate(document, stored.state);
        compactDocument(document);
        if (stored.unsynced) this.#setUnsynced(documentName, true);
      },
      connected: async ({ documentName }) => {
        this.#options.onDocumentUse?.(documentName, true);
      },
      onDisconnect: async ({ documentName, socketId }) => {
        // Replication's own (direct) connections close as "server"; only the renderer's count here.
        if (socketId !== "server") this.#options.onDocumentUse?.(documentName, false);
      },
      onChange: async ({ documentName, transactionOrigin }) => {
        this.#dirty.add(documentName);
        // Updates replication applies came from the server; everything else was made here.
        if (transactionOrigin instanceof HocuspocusProvider || transactionOrigin === FROM_SERVER) return;
        this.#localChanges += 1;
        this.#lastLocalChange.set(documentName, this.#localChanges);
        this.#setUnsynced(documentName, true);
      },
      onStoreDocument: async ({ documentName, document }) => {
        // Hocuspocus stores a document again when it closes; unchanged, it is already on disk.
        if (this.#closed || !this.#dirty.delete(documentName)) return;
        this.#writes += 1;
        this.#lastWrite.set(documentName, this.#writes);
        try {
          await this.#store.save(documentName, document, this.#unsynced.has(documentName));
        } catch (error) {
          this.#dirty.add(documentName);
          throw error;
        }
        this.#options.onStored?.(documentName, document);
      },
    });
    sockets.on("connection", (websocket) => {
      // The request's headers and URL mean nothing here: the token is the only credential.
      const connection = this.hocuspocus.handleConnection(websocket, new Request("http://127.0.0.1/"));
      websocket.on("message", (data) => connection.handleMessage(toBytes(data)));
      websocket.on("close", (code, reason) => connection.handleClose({ code, reason: reason.toString() }));
      websocket.on("error", () => {});
    });
  }

  static async start(options: LocalHubOptions): Promise<LocalHub> {
    const unsynced = await options.store.unsyncedNames();
    const sockets = new WebSocketServer({ host: "127.0.0.1", port: 0, maxPayload: 64 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      sockets.once("listening", resolve);
      sockets.once("error", reject);
    });
    return new LocalHub(options, sockets, randomBytes(32).toString("base64url"), unsynced);
  }

  /** The signed-in user's workspace and todos, and any note. */
  servesDocument(name: string): boolean {
    const ref = parseDocName(name);
    if (!ref) return false;
    return ref.kind === "note" || ref.userId === this.#options.userId;
  }

  /**
   * Opens a document in the hub and keeps it open until disconnected. It is read from disk, unless
   * the caller read it ahead ({@link preload}) and the hub has not stored it since.
   */
  openDirectConnection(name: string, preloaded?: PreloadedDocument): Promise<HubConnection> {
    return this.hocuspocus.openDirectConnection(name, { preloaded } satisfies HubContext);
  }

  /** This account's stored documents among `names`, read at once (thousands, one query each, would hold up every other query). */
  async preload(names: readonly string[]): Promise<Map<string, PreloadedDocument>> {
    const readAfterWrite = this.#writes;
    const stored = await this.#store.loadMany(names);
    return new Map([...stored].map(([name, document]) => [name, { stored: document, readAfterWrite }]));
  }

  /** Whether the document is in memory here (open, loading, or not yet unloaded), for whatever reason. */
  isLoaded(name: string): boolean {
    return this.hocuspocus.documents.has(name) || this.hocuspocus.loadingDocuments.has(name);
  }

  /**
   * Where the document's latest local change stands in the order of all local changes (0: none
   * since start): replication compares it before and after an exchange from stored bytes, which
   * confirms only what was stored when it started.
   */
  localChangeMark(name: string): number {
    return this.#lastLocalChange.get(name) ?? 0;
  }

  /** The document's stored state: the preloaded copy if the hub has not stored it since; undefined without a copy. */
  async storedState(name: string, preloaded?: PreloadedDocument): Promise<Uint8Array | undefined> {
    await this.#merging.get(name)?.catch(() => {});
    const fresh = preloaded && (this.#lastWrite.get(name) ?? 0) <= preloaded.readAfterWrite;
    return (fresh ? preloaded.stored : await this.#store.load(name))?.state;
  }

  /**
   * Applies an update from the server to a document replication keeps closed: merged into the
   * stored copy, and into the live one if the document is (or gets) loaded meanwhile, so neither
   * misses it. Answers once it is on disk.
   */
  applyRemote(name: string, update: Uint8Array): Promise<void> {
    const live = this.hocuspocus.documents.get(name);
    if (live) {
      Y.applyUpdate(live, update, FROM_SERVER);
      return Promise.resolve();
    }
    this.#writes += 1;
    this.#lastWrite.set(name, this.#writes);
    const previous = this.#merging.get(name) ?? Promise.resolve();
    const merged = previous
      .catch(() => {})
      .then(() => this.#store.merge(name, update))
      .then(() => {
        // Loaded while the write was on its way: a load waits for it, but one under way may have read
        // before (not awaited here: that load may be the one waiting for this write).
        const loaded = this.hocuspocus.documents.get(name);
        if (loaded) Y.applyUpdate(loaded, update, FROM_SERVER);
        else
          this.hocuspocus.loadingDocuments.get(name)?.then(
            (document) => Y.applyUpdate(document, update, FROM_SERVER),
            () => {},
          );
      })
      .catch((error: unknown) => {
        this.#failedMerges += 1;
        throw error;
      })
      .finally(() => {
        if (this.#merging.get(name) === merged) this.#merging.delete(name);
      });
    this.#merging.set(name, merged);
    return merged;
  }

  /**
   * Waits until every update {@link applyRemote} was given is on disk; rejects if one of them
   * failed since the last call (replication then does not record how far it got).
   */
  async flushRemote(): Promise<void> {
    await Promise.all([...this.#merging.values()].map((merging) => merging.catch(() => {})));
    await this.#store.flush();
    const failed = this.#failedMerges;
    this.#failedMerges = 0;
    if (failed > 0) throw new Error(`${failed} updates from the server could not be stored`);
  }

  /** Whether the renderer has the document open (replication's own connections do not count). */
  isOpen(name: string): boolean {
    return (this.hocuspocus.documents.get(name)?.connections.size ?? 0) > 0;
  }

  /** Notes with a copy on this machine. */
  storedNoteNames(): Promise<string[]> {
    return this.#store.noteNames();
  }

  /** Every document holding local changes the server has not confirmed. */
  unsyncedNames(): ReadonlySet<string> {
    return this.#unsynced;
  }

  /** Whether the document holds local changes the server has not confirmed. */
  isUnsynced(name: string): boolean {
    return this.#unsynced.has(name);
  }

  /** Replication calls this once the server has confirmed everything the document holds. */
  markSynced(name: string): void {
    if (!this.#unsynced.has(name)) return;
    this.#setUnsynced(name, false);
    if (!this.#closed) void this.#store.setUnsynced(name, false).catch(() => {});
  }

  /** Gives back memory decoding left unused in the open documents (after a burst of updates; see compact-document.ts). */
  compactDocuments(): void {
    for (const document of this.hocuspocus.documents.values()) compactDocument(document);
  }

  /**
   * A document's current content, read-only: the live copy if it is open, else the stored one.
   * Undefined when this machine has no copy.
   */
  async readDocument<T>(name: string, read: (doc: Y.Doc) => T): Promise<T | undefined> {
    const live = this.hocuspocus.documents.get(name);
    if (live) return read(live);
    const stored = await this.#store.loadDoc(name);
    if (!stored) return undefined;
    try {
      return read(stored);
    } finally {
      stored.destroy();
    }
  }

  /** {@link readDocument} for many: see `SyncService.readDocuments`. */
  async readDocuments<T>(names: readonly string[], read: (doc: Y.Doc, name: string) => T): Promise<Map<string, T>> {
    const answers = new Map<string, T>();
    const unique = [...new Set(names)];
    for (let start = 0; start < unique.length; start += READ_CHUNK) {
      if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const chunk = unique.slice(start, start + READ_CHUNK);
      const stored = await this.#store.loadMany(chunk.filter((name) => !this.hocuspocus.documents.has(name)));
      for (const name of chunk) {
        // Opened meanwhile: the live copy may be ahead of the stored one.
        const live = this.hocuspocus.documents.get(name);
        if (live) {
          answers.set(name, read(live, name));
          continue;
        }
        const state = stored.get(name)?.state;
        if (!state) continue;
        const doc = new Y.Doc();
        try {
          Y.applyUpdate(doc, state);
          answers.set(name, read(doc, name));
        } finally {
          doc.destroy();
        }
      }
    }
    return answers;
  }

  /** Closes the renderer's connections and stores every open document before answering. */
  async close(): Promise<void> {
    if (this.#closed) return;
    for (const websocket of this.#sockets.clients) websocket.terminate();
    await new Promise<void>((resolve) => this.#sockets.close(() => resolve()));
    this.hocuspocus.flushPendingStores();
    await Promise.all(
      [...this.hocuspocus.documents].map(([name, document]) => this.#store.save(name, document, this.#unsynced.has(name)).catch(() => {})),
    );
    this.#closed = true;
    await this.#store.flush();
  }

  #setUnsynced(name: string, unsynced: boolean): void {
    if (this.#unsynced.has(name) === unsynced) return;
    if (unsynced) this.#unsynced.add(name);
    else this.#unsynced.delete(name);
    this.#options.onUnsyncedChange?.();
  }
}
