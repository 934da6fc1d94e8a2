import { HocuspocusProvider, HocuspocusProviderWebsocket, WebSocketStatus } from "@hocuspocus/provider";
import { isUuid, NOTES_MAP, noteDocName, todosDocName, workspaceDocName } from "@tandem/core";
import WebSocket from "ws";
import type * as Y from "yjs";
import type { LocalHub, PreloadedDocument } from "./local-hub";
import { ReplicatedDocument } from "./replicated-document";

/**
 * `ws` emits `error` when a socket is closed while still connecting (as on sign-out or shutdown
 * during a reconnect), and an `error` nobody listens to kills the process. The provider learns of
 * every failure through `onclose` anyway, so a listener that only absorbs the event is enough.
 */
class ListenedWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    this.on("error", () => {});
  }
}

export interface ReplicatorOptions {
  readonly hub: LocalHub;
  /** `ws(s)://host:port/sync` */
  readonly syncUrl: string;
  readonly apiKey: string;
  readonly userId: number;
  /** Called, often and synchronously, whenever something {@link Replicator.progress} reports may have changed. */
  readonly onChange: () => void;
  /** Why the server refused the workspace or the todos (asks the server whether the key still works). */
  readonly explainRefusal: (documentName: string) => Promise<string>;
  /** Documents authenticating at once; the server closes a socket with more than 100 pending. */
  readonly maxAuthenticating?: number;
  /** Reconnect backoff bounds, in ms. */
  readonly reconnectDelayMs?: number;
  readonly reconnectMaxDelayMs?: number;
}

export interface ReplicationProgress {
  readonly connected: boolean;
  /** Set while the server refuses the workspace or the todos. */
  readonly error: string | null;
  /** Documents replicated. */
  readonly documents: number;
  /** Documents not up to date with the server yet (not yet synced, or with unconfirmed changes). */
  readonly behind: number;
  /** Documents holding local changes the server has not confirmed. */
  readonly unsynced: number;
}

const DEFAULT_MAX_AUTHENTICATING = 50;
/**
 * Notes opened in the hub per turn of the event loop. Opening one (reading it, applying its state,
 * setting up the hub's document) takes a fraction of a millisecond, but thousands at once would hold
 * the thread that also serves the page and the host API for a second or more.
 */
const OPEN_CHUNK = 100;
/**
 * At a start with notes already on this machine, their replication waits this long: catching up on
 * thousands of documents costs seconds of CPU here and on the server (one exchange each), which
 * would otherwise compete with the renderer's first page. The renderer works on the local copies
 * meanwhile. Notes arriving with a first replication (nothing local yet) do not wait.
 */
const NOTES_START_DELAY_MS = 2_000;
/** A refused note is tried again after this, doubling up to the maximum. */
const REFUSED_RETRY_MS = 5_000;
const REFUSED_RETRY_MAX_MS = 5 * 60_000;

/**
 * Replicates every document of one user with the server over one WebSocket: the workspace, the
 * todos and each note the workspace lists (added and dropped as the workspace changes, on either
 * side). Each document is a `HocuspocusProvider` bound to the local hub's copy, so remote changes
 * reach the renderer and the disk through the hub, and local changes go up.
 *
 * Authentication is admitted in turns: at most `maxAuthenticating` documents wait for the server's
 * answer at once, and after a reconnect every document waits for its turn again (providers are
 * detached while the socket is down). Notes are admitted only while the server has the whole
 * workspace, because the server allows a note only once the workspace lists it.
 */
export class Replicator {
  readonly #options: ReplicatorOptions;
  readonly #websocket: HocuspocusProviderWebsocket;
  readonly #docs = new Map<string, ReplicatedDocument>();
  /** Ready documents not attached yet, in the order they are admitted. */
  readonly #waiting = new Set<ReplicatedDocument>();
  /** Notes counted as replicated but not opened in the hub yet: they open only while the socket is up. */
  readonly #unopened = new Set<ReplicatedDocument>();
  #opening = false;
  /** Notes do not open before this time (ms, `performance.now()`); see {@link NOTES_START_DELAY_MS}. */
  #notesFrom = 0;
  #notesTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #workspaceName: string;
  readonly #todosName: string;
  readonly #maxAuthenticating: number;
  #authenticating = 0;
  #stopped = false;
  #workspaceMap: Y.Map<unknown> | undefined;
  readonly #onNotesChanged = () => this.#reconcileNotes();

  constructor(options: ReplicatorOptions) {
    this.#options = options;
    this.#workspaceName = workspaceDocName(options.userId);
    this.#todosName = todosDocName(options.userId);
    this.#maxAuthenticating = options.maxAuthenticating ?? DEFAULT_MAX_AUTHENTICATING;
    this.#websocket = new HocuspocusProviderWebsocket({
      url: options.syncUrl,
      WebSocketPolyfill: ListenedWebSocket,
      delay: options.reconnectDelayMs ?? 1000,
      minDelay: options.reconnectDelayMs ?? 1000,
      maxDelay: options.reconnectMaxDelayMs ?? 10_000,
      onStatus: ({ status }) => {
        if (status === WebSocketStatus.Connected) {
          queueMicrotask(() => {
            this.#pump();
            void this.#openNotes();
          });
        }
        if (status === WebSocketStatus.Disconnected) queueMicrotask(() => this.#detachAll());
        options.onChange();
      },
    });
  }

  /**
   * Opens the workspace and the todos; notes the workspace lists open once the server is reachable
   * ({@link #openNotes}), so a cold start, above all an offline one, does not open thousands of
   * documents while the renderer waits for its first page.
   */
  async start(): Promise<void> {
    await Promise.all([this.#add(this.#workspaceName), this.#add(this.#todosName)]);
    const workspace = this.#docs.get(this.#workspaceName)?.connection?.document;
    if (!workspace || this.#stopped) return;
    this.#workspaceMap = workspace.getMap(NOTES_MAP);
    if (this.#workspaceMap.size > 0) this.#notesFrom = performance.now() + NOTES_START_DELAY_MS;
    this.#workspaceMap.observe(this.#onNotesChanged);
    this.#reconcileNotes();
  }

  progress(): ReplicationProgress {
    let behind = 0;
    let unsynced = 0;
    for (const doc of this.#docs.values()) {
      const localChanges = this.#options.hub.isUnsynced(doc.name);
      if (localChanges) unsynced += 1;
      // A note the server refuses waits for its retry without holding the state at "syncing".
      if (doc.state !== "refused" && (localChanges || !doc.upToDate)) behind += 1;
    }
    const refusal = this.#docs.get(this.#workspaceName)?.refusal ?? this.#docs.get(this.#todosName)?.refusal ?? null;
    return {
      connected: this.#websocket.status === WebSocketStatus.Connected,
      error: refusal,
      documents: this.#docs.size,
      behind,
      unsynced,
    };
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#workspaceMap?.unobserve(this.#onNotesChanged);
    const docs = [...this.#docs.values()];
    this.#docs.clear();
    this.#waiting.clear();
    this.#unopened.clear();
    clearTimeout(this.#notesTimer);
    for (const doc of docs) this.#release(doc);
    this.#websocket.destroy();
    await Promise.all(docs.map((doc) => doc.connection?.disconnect().catch(() => {})));
  }

  #reconcileNotes(): void {
    if (this.#stopped || !this.#workspaceMap) return;
    const listed = new Set<string>();
    for (const uuid of this.#workspaceMap.keys()) if (isUuid(uuid)) listed.add(noteDocName(uuid));
    for (const [name, doc] of this.#docs) {
      if (name.startsWith("note:") && !listed.has(name)) void this.#remove(doc);
    }
    let added = false;
    for (const name of listed) {
      if (this.#docs.has(name)) continue;
      this.#unopened.add(this.#reserve(name));
      added = true;
    }
    if (added) {
      this.#options.onChange();
      void this.#openNotes();
    }
  }

  /**
   * Opens the notes not open yet, a chunk per turn of the event loop, while the socket is up.
   * Offline there is nothing to replicate, and what the status needs of an unopened note (whether
   * it holds unconfirmed changes) the hub knows from the stored mark. A note the renderer edits
   * offline is open in the hub anyway; replication binds to that copy once the server is back.
   */
  async #openNotes(): Promise<void> {
    if (this.#opening) return;
    const wait = this.#notesFrom - performance.now();
    if (wait > 0) {
      clearTimeout(this.#notesTimer);
      this.#notesTimer = setTimeout(() => void this.#openNotes(), wait);
      this.#notesTimer.unref();
      return;
    }
    this.#opening = true;
    try {
      while (this.#unopened.size > 0 && !this.#stopped && this.#websocket.status === WebSocketStatus.Connected) {
        const docs = [...this.#unopened].slice(0, OPEN_CHUNK);
        for (const doc of docs) this.#unopened.delete(doc);
        // Read from disk together: thousands of queries one by one would hold up every other query.
        const names = docs.map((doc) => doc.name);
        const stored = await (names.length > 1 ? this.#options.hub.preload(names) : Promise.resolve(undefined)).catch(() => undefined);
        await Promise.all(docs.map((doc) => this.#open(doc, stored?.get(doc.name))));
        // Lets the page, the host API and the renderer's own documents through between chunks.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.#opening = false;
    }
  }

  /** Counts a document as replicated from now on; {@link #open} makes it so. */
  #reserve(name: string): ReplicatedDocument {
    const doc = new ReplicatedDocument(name);
    this.#docs.set(name, doc);
    return doc;
  }

  #add(name: string): Promise<void> {
    return this.#open(this.#reserve(name));
  }

  /** Opens a document in the hub and queues it for its turn; a failure drops it until the next change of the workspace. */
  async #open(doc: ReplicatedDocument, preloaded?: PreloadedDocument): Promise<void> {
    const { name } = doc;
    if (doc.removed || this.#stopped) return;
    try {
      doc.connection = await this.#options.hub.openDirectConnection(name, preloaded);
    } catch (error) {
      if (this.#docs.get(name) === doc) this.#docs.delete(name);
      if (!this.#stopped) console.error(`Tandem: could not open ${name} locally:`, error instanceof Error ? error.message : error);
      return;
    }
    const document = doc.connection.document;
    if (doc.removed || this.#stopped || !document) {
      await doc.connection.disconnect().catch(() => {});
      return;
    }
    doc.provider = new HocuspocusProvider({
      name,
      document,
      websocketProvider: this.#websocket,
      token: this.#options.apiKey,
      // Awareness is presence; replication is not a person editing, so documents share none, except
      // the workspace: its awareness renews itself every 15 s, which is what keeps an idle socket
      // open (both sides close one that stays silent for 30 s; Hocuspocus asks for one awareness
      // per socket for exactly this).
      ...(name === this.#workspaceName ? {} : { awareness: null }),
      onAuthenticated: () => this.#onAuthenticated(doc),
      onAuthenticationFailed: ({ reason }) => this.#onRefused(doc, reason),
      onSynced: () => this.#onProgress(doc),
      onUnsyncedChanges: () => this.#onProgress(doc),
    });
    doc.state = "waiting";
    this.#waiting.add(doc);
    this.#pump();
    this.#options.onChange();
  }

  async #remove(doc: ReplicatedDocument): Promise<void> {
    doc.removed = true;
    if (this.#docs.get(doc.name) === doc) this.#docs.delete(doc.name);
    this.#waiting.delete(doc);
    this.#unopened.delete(doc);
    this.#release(doc);
    this.#options.onChange();
    // The local copy stays on disk: undoing the removal brings it back without a download.
    await doc.connection?.disconnect().catch(() => {});
  }

  /** Stops replicating one document (its provider is gone; the hub's copy is not touched). */
  #release(doc: ReplicatedDocument): void {
    if (doc.state === "authenticating") this.#authenticating -= 1;
    clearTimeout(doc.retryTimer);
    doc.provider?.destroy();
    doc.state = "waiting";
  }

  /** Attaches waiting documents while there is room for more to authenticate. */
  #pump(): void {
    if (this.#stopped || this.#websocket.status !== WebSocketStatus.Connected) return;
    const notesAllowed = this.#docs.get(this.#workspaceName)?.upToDate === true;
    for (const doc of this.#waiting) {
      if (this.#authenticating >= this.#maxAuthenticating) return;
      if (doc.name.startsWith("note:") && !notesAllowed) continue;
      this.#waiting.delete(doc);
      doc.state = "authenticating";
      this.#authenticating += 1;
      doc.provider?.attach();
    }
  }

  #onAuthenticated(doc: ReplicatedDocument): void {
    if (doc.state !== "authenticating") return;
    this.#authenticating -= 1;
    doc.state = "live";
    doc.refusals = 0;
    doc.refusal = null;
    this.#pump();
    this.#options.onChange();
  }

  #onRefused(doc: ReplicatedDocument, reason: string): void {
    if (doc.state === "authenticating") this.#authenticating -= 1;
    doc.state = "refused";
    this.#detachQuietly(doc);
    doc.refusals += 1;
    const delay = Math.min(REFUSED_RETRY_MS * 2 ** (doc.refusals - 1), REFUSED_RETRY_MAX_MS);
    doc.retryTimer = setTimeout(() => {
      if (doc.state !== "refused" || doc.removed || this.#stopped) return;
      doc.state = "waiting";
      this.#waiting.add(doc);
      this.#pump();
    }, delay);
    doc.retryTimer.unref();
    doc.refusal = `The server refused ${doc.name} (${reason})`;
    if (doc.name === this.#workspaceName || doc.name === this.#todosName) {
      void this.#options.explainRefusal(doc.name).then((message) => {
        if (doc.state === "refused" && !this.#stopped) {
          doc.refusal = message;
          this.#options.onChange();
        }
      });
    }
    this.#pump();
    this.#options.onChange();
  }

  #onProgress(doc: ReplicatedDocument): void {
    if (doc.upToDate) {
      this.#options.hub.markSynced(doc.name);
      // The server now has the whole workspace: notes it lists may authenticate.
      if (doc.name === this.#workspaceName) this.#pump();
    }
    this.#options.onChange();
  }

  /** The socket is down: every document waits for its turn again once it is back. */
  #detachAll(): void {
    if (this.#stopped || this.#websocket.status === WebSocketStatus.Connected) return;
    this.#authenticating = 0;
    for (const doc of this.#docs.values()) {
      if (doc.state !== "authenticating" && doc.state !== "live") continue;
      this.#detachQuietly(doc);
      doc.state = "waiting";
      this.#waiting.add(doc);
    }
    this.#options.onChange();
  }

  /**
   * Detaches a provider without the CLOSE message `detach` sends: after a refusal the server has
   * no connection to close, and with the socket down the message would wait in the queue and, sent
   * after the document's next authentication, close it again.
   */
  #detachQuietly(doc: ReplicatedDocument): void {
    if (!doc.provider) return;
    this.#websocket.configuration.providerMap.delete(doc.provider.effectiveName);
    doc.provider.detach();
  }
}
