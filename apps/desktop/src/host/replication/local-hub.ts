import { randomBytes, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { HocuspocusProvider } from "@hocuspocus/provider";
import type { Hocuspocus } from "@hocuspocus/server";
import { parseDocName } from "@tandem/core";
import { UnloadSafeHocuspocus } from "@tandem/server/unload-safe-hocuspocus";
import { type RawData, WebSocketServer } from "ws";
import * as Y from "yjs";
import type { LocalDocumentStore, StoredDocument } from "../store/document-store";

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
}

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
        const preloaded = (context as HubContext | undefined)?.preloaded;
        const fresh = preloaded && (this.#lastWrite.get(documentName) ?? 0) <= preloaded.readAfterWrite;
        const stored = fresh ? preloaded.stored : await this.#store.load(documentName);
        if (!stored) return;
        Y.applyUpdate(document, stored.state);
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
        // Updates replication applies came from the server; everything else was made here.
        if (!(transactionOrigin instanceof HocuspocusProvider)) this.#setUnsynced(documentName, true);
      },
      onStoreDocument: async ({ documentName, document }) => {
        if (this.#closed) return;
        this.#writes += 1;
        this.#lastWrite.set(documentName, this.#writes);
        await this.#store.save(documentName, document, this.#unsynced.has(documentName));
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

  /** Whether the renderer has the document open (replication's own connections do not count). */
  isOpen(name: string): boolean {
    return (this.hocuspocus.documents.get(name)?.connections.size ?? 0) > 0;
  }

  /** Notes with a copy on this machine. */
  storedNoteNames(): Promise<string[]> {
    return this.#store.noteNames();
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
