import { HocuspocusProvider, HocuspocusProviderWebsocket, WebSocketStatus } from "@hocuspocus/provider";
import {
  type DocumentChangesPosition,
  isUuid,
  MAX_PULL_DOCUMENTS,
  NOTES_MAP,
  noteDocName,
  TandemApiError,
  todosDocName,
  workspaceDocName,
} from "@tandem/core";
import WebSocket from "ws";
import * as Y from "yjs";
import { releaseMemory } from "../release-memory";
import { ClosingSink } from "./closing-sink";
import type { LocalHub, PreloadedDocument } from "./local-hub";
import { type PullDocuments, type PullOutcome, pullNotes } from "./note-pull";
import { ReplicatedDocument } from "./replicated-document";
import { StoredExchange } from "./stored-exchange";

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

/** One page of the server's change feed (`GET /sync/changes`). */
export interface DocumentChangesPage {
  readonly documents: readonly string[];
  readonly position: DocumentChangesPosition | null;
  readonly more: boolean;
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
  /** Reads a page of the server's change feed: its notes stored at or after `since` (every note when null). */
  readonly fetchChanges: (from: { since: string; after?: string } | null) => Promise<DocumentChangesPage>;
  /**
   * Pulls many closed notes in one request (`POST /sync/pull`, see note-pull.ts); without it, or
   * against a server without that route, every note is exchanged over sync on its own.
   */
  readonly pullDocuments?: PullDocuments;
  /** Where the last complete catch-up got to (a time of the server's), kept across restarts. */
  readonly cursor: { load(): Promise<DocumentChangesPosition | null>; save(position: DocumentChangesPosition): Promise<void> };
  /** Documents authenticating at once; the server closes a socket with more than 100 pending. */
  readonly maxAuthenticating?: number;
  /** Notes kept open, synced and unused, for a quick return to them; the rest are closed. */
  readonly keepOpen?: number;
  /** How often, while connected, the change feed is read for notes changed on the server. */
  readonly catchUpIntervalMs?: number;
  /** How far before the last position a catch-up reads again (see {@link DEFAULT_CATCH_UP_OVERLAP_MS}). */
  readonly catchUpOverlapMs?: number;
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
 * Notes opened for an exchange and not through it yet. Each open note is a Y.Doc here and on the
 * server; the bound keeps a first replication of tens of thousands of notes within a few hundred
 * documents in memory on both sides, while leaving enough in flight to keep the socket busy.
 */
const MAX_IN_FLIGHT = 200;
const DEFAULT_KEEP_OPEN = 100;
/**
 * Pull requests under way at once: two keep both sides busy (one is answered while the next is read
 * and stored here) without queueing work on a server that has other clients.
 */
const MAX_PULLS_IN_FLIGHT = 2;
/**
 * Notes asked for per pull request (the server takes up to {@link MAX_PULL_DOCUMENTS}). A few hundred
 * KB an answer for notes of a few KB: an answer of several MB, once freed, leaves the C allocator
 * keeping about as much for good (glibc raises its thresholds to the largest block freed), which a
 * first replication of 20,000 notes showed as 10–20 MB more resident memory.
 */
const PULL_BATCH = 100;
/** Queued notes looked at per chunk for ones to exchange or pull (the queue may hold every note). */
const MAX_QUEUE_SCAN = 2_000;
const EXCHANGE_OVER_SYNC: PullOutcome = { kind: "exchange" };
/**
 * Notes opened in the hub per turn of the event loop: opening one takes a fraction of a
 * millisecond, but hundreds at once would hold the thread that also serves the page and the host API.
 */
const OPEN_CHUNK = 50;
const DEFAULT_CATCH_UP_INTERVAL_MS = 20_000;
/**
 * A catch-up reads the feed from a little before where the last one ended: a document stored with
 * an earlier time may commit after a later one was read. Reading a few documents twice costs one
 * exchange each; missing one would leave it stale until it changes again.
 */
const DEFAULT_CATCH_UP_OVERLAP_MS = 10_000;
/** Whether feed position `a` comes at or before `b` (stored time, then document name). */
function atOrBefore(a: DocumentChangesPosition, b: DocumentChangesPosition): boolean {
  return a.since < b.since || (a.since === b.since && a.after <= b.after);
}

/**
 * Exchanges after which, once nothing is left queued or in flight, the host gives the memory the
 * burst grew back to the system (see {@link releaseMemory}); a few notes caught up need no such thing.
 */
const RELEASE_MEMORY_AFTER = 500;
/** What an exchange starts from for a note without a copy here. */
const EMPTY_UPDATE = Y.encodeStateAsUpdate(new Y.Doc());
/** A refused note is tried again after this, doubling up to the maximum. */
const REFUSED_RETRY_MS = 5_000;
const REFUSED_RETRY_MAX_MS = 5 * 60_000;

/**
 * Replicates every document of one user with the server over one WebSocket: the workspace and the
 * todos, held open and live, and each note the workspace lists.
 *
 * Notes are opened only when there is something to exchange, and closed again once they are in
 * step: a note the server stored since the last catch-up (its change feed, read on connecting and
 * every {@link DEFAULT_CATCH_UP_INTERVAL_MS}), a note with no copy here yet, one holding local
 * changes, and any note the renderer has open (which then stays live both ways while it is open).
 * At most {@link DEFAULT_KEEP_OPEN} synced notes stay open for a quick return; the rest live on disk.
 * So memory follows what is used, not the size of the workspace, on this machine and on the server.
 *
 * Authentication is admitted in turns: at most `maxAuthenticating` documents wait for the server's
 * answer at once, and after a reconnect every open document waits for its turn again (providers are
 * detached while the socket is down). Notes are admitted only while the server has the whole
 * workspace, because the server allows a note only once the workspace lists it.
 */
export class Replicator {
  readonly #options: ReplicatorOptions;
  readonly #websocket: HocuspocusProviderWebsocket;
  readonly #docs = new Map<string, ReplicatedDocument>();
  /** Ready documents not attached yet, in the order they are admitted. */
  readonly #waiting = new Set<ReplicatedDocument>();
  /** Closed notes due an exchange; they open while the socket is up, {@link MAX_IN_FLIGHT} at a time. */
  readonly #queued = new Set<ReplicatedDocument>();
  /**
   * Notes opened for an exchange and not through it yet (kept as a set, not counted: it is asked
   * about once per note settled, and a count over every note would make a first replication quadratic).
   */
  readonly #inFlight = new Set<ReplicatedDocument>();
  /** Notes in a pull under way (see {@link #pull}), and the pulls under way. */
  readonly #pulling = new Set<ReplicatedDocument>();
  #pulls = 0;
  /** The server has no pull route (an older server): every note is exchanged over sync. */
  #pullUnavailable = false;
  /** Names whose CLOSE the server has not answered yet: nothing attaches for them until it has (see closing-sink.ts). */
  readonly #closingNames = new Map<string, ClosingSink>();
  /**
   * Documents not closed (the workspace, the todos, notes open or in an exchange): with the queue and
   * the hub's unsynced marks, all {@link progress} needs to look at, so a status read does not walk
   * every note of a large workspace (it is read often: every status event, every poll).
   */
  readonly #notClosed = new Set<ReplicatedDocument>();
  readonly #onClosedChange = (doc: ReplicatedDocument, closed: boolean) => {
    if (closed || this.#docs.get(doc.name) !== doc) this.#notClosed.delete(doc);
    else this.#notClosed.add(doc);
  };
  /** Open notes through their exchange and unused, oldest first: closed beyond `keepOpen`. */
  readonly #idle = new Set<ReplicatedDocument>();
  /** Notes with a copy on this machine (a note without one is due an exchange as soon as it is listed). */
  #stored = new Set<string>();
  #opening = false;
  /** Notes closing: still in memory until the hub has stored and unloaded them. */
  #closing = 0;
  #catchUpTimer: ReturnType<typeof setTimeout> | undefined;
  #catchingUp = false;
  /**
   * The feed's latest position and when the catch-up that first reached it had read it. A later
   * catch-up reads again from a little before it (the overlap), which names again every note stored
   * just before: a note exchanged after that first read already has whatever those stores held, so
   * it is not exchanged again (after a bulk import that is thousands of notes, every 20 s).
   */
  #reach: { position: DocumentChangesPosition; readAt: number } | null = null;
  /** The feed position a completed catch-up reached, saved once nothing is left to exchange. */
  #pendingCursor: DocumentChangesPosition | null = null;
  readonly #workspaceName: string;
  readonly #todosName: string;
  readonly #maxAuthenticating: number;
  readonly #keepOpen: number;
  readonly #catchUpIntervalMs: number;
  readonly #catchUpOverlapMs: number;
  #authenticating = 0;
  /**
   * Set until this machine's first catch-up has read the whole feed (or failed): notes wait for it.
   * Without a saved position the feed names every note the server has, and a note exchanged before
   * its page arrives would be exchanged again; after the feed, each exchange is newer than what it
   * named. (A first replication exchanges every note anyway: the feed gives it only the position.)
   */
  #firstCatchUpPending = false;
  /** Exchanges through since memory was last given back. */
  #exchangedSinceRelease = 0;
  #stopped = false;
  #workspaceMap: Y.Map<unknown> | undefined;
  readonly #onNotesChanged = () => this.#reconcileNotes();

  constructor(options: ReplicatorOptions) {
    this.#options = options;
    this.#workspaceName = workspaceDocName(options.userId);
    this.#todosName = todosDocName(options.userId);
    this.#maxAuthenticating = options.maxAuthenticating ?? DEFAULT_MAX_AUTHENTICATING;
    this.#keepOpen = options.keepOpen ?? DEFAULT_KEEP_OPEN;
    this.#catchUpIntervalMs = options.catchUpIntervalMs ?? DEFAULT_CATCH_UP_INTERVAL_MS;
    this.#catchUpOverlapMs = options.catchUpOverlapMs ?? DEFAULT_CATCH_UP_OVERLAP_MS;
    this.#websocket = new HocuspocusProviderWebsocket({
      url: options.syncUrl,
      // start() connects.
      autoConnect: false,
      WebSocketPolyfill: ListenedWebSocket,
      delay: options.reconnectDelayMs ?? 1000,
      minDelay: options.reconnectDelayMs ?? 1000,
      maxDelay: options.reconnectMaxDelayMs ?? 10_000,
      onStatus: ({ status }) => {
        if (status === WebSocketStatus.Connected) {
          queueMicrotask(() => {
            this.#pump();
            void this.#openQueued();
          });
        }
        if (status === WebSocketStatus.Disconnected) queueMicrotask(() => this.#detachAll());
        options.onChange();
      },
    });
  }

  /**
   * Opens the workspace and the todos; notes open as they become due (see the class comment), so a
   * cold start opens only what changed.
   */
  async start(): Promise<void> {
    if (this.#stopped) return;
    // Retries go on by themselves (without a limit); a failure here is only the first attempt's.
    this.#websocket.connect().catch(() => {});
    const [stored, cursor] = await Promise.all([
      this.#options.hub.storedNoteNames(),
      this.#options.cursor.load().catch(() => null),
      this.#add(this.#workspaceName),
      this.#add(this.#todosName),
    ]);
    this.#stored = new Set(stored);
    this.#firstCatchUpPending = cursor === null;
    const workspace = this.#docs.get(this.#workspaceName)?.connection?.document;
    if (!workspace || this.#stopped) return;
    this.#workspaceMap = workspace.getMap(NOTES_MAP);
    this.#workspaceMap.observe(this.#onNotesChanged);
    this.#reconcileNotes();
    // The workspace may already be through its exchange (a quick server): the first catch-up then starts here.
    if (this.#docs.get(this.#workspaceName)?.upToDate) void this.#catchUp();
  }

  /** The renderer opened a document: a note then replicates live for as long as it stays open. */
  useDocument(name: string): void {
    const doc = this.#docs.get(name);
    if (!doc || this.#stopped) return;
    this.#idle.delete(doc);
    if (doc.exchange) {
      // Being exchanged from its stored bytes: it goes on live through the hub's copy instead. An
      // exchange the server has heard of (its token sent) finishes first (see #exchanged): a CLOSE
      // sent now could reach the server before its pending authentication completes, which would
      // then hold the document's connection against the provider that comes next.
      if (doc.state === "authenticating" || doc.state === "live") return;
      doc.exchange.destroy(false);
      doc.exchange = undefined;
      this.#inFlight.delete(doc);
      this.#waiting.delete(doc);
      clearTimeout(doc.retryTimer);
      doc.state = "closed";
    }
    if (doc.state === "closed") this.#enqueue(doc, true);
  }

  /** The renderer let go of a document: a note in step may close (see `keepOpen`). */
  releaseDocument(name: string): void {
    const doc = this.#docs.get(name);
    if (doc?.upToDate) this.#settle(doc);
  }

  progress(): ReplicationProgress {
    const hub = this.#options.hub;
    // Behind: an open document not up to date or with local changes (a note the server refuses waits
    // for its retry without holding the state at "syncing"); a closed one queued, or with local changes.
    let behind = this.#queued.size;
    for (const doc of this.#notClosed) {
      if (doc.state !== "refused" && (!doc.upToDate || hub.isUnsynced(doc.name))) behind += 1;
    }
    let unsynced = 0;
    for (const name of hub.unsyncedNames()) {
      const doc = this.#docs.get(name);
      if (!doc) continue;
      unsynced += 1;
      if (doc.state === "closed" && !this.#queued.has(doc)) behind += 1;
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

  /** Notes open in the hub for replication (for tests and benchmarks). */
  openNotes(): number {
    let open = 0;
    for (const doc of this.#docs.values()) if (doc.name.startsWith("note:") && doc.state !== "closed") open += 1;
    return open;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#workspaceMap?.unobserve(this.#onNotesChanged);
    const docs = [...this.#docs.values()];
    this.#docs.clear();
    this.#notClosed.clear();
    this.#waiting.clear();
    this.#queued.clear();
    this.#idle.clear();
    this.#inFlight.clear();
    this.#pulling.clear();
    for (const sink of [...this.#closingNames.values()]) sink.release();
    clearTimeout(this.#catchUpTimer);
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
      const doc = this.#reserve(name);
      doc.state = "closed";
      // Without a copy here, or with changes the server has not confirmed, it is due an exchange
      // now; otherwise the change feed says when it is.
      if (!this.#stored.has(name) || this.#options.hub.isUnsynced(name) || this.#options.hub.isOpen(name)) this.#enqueue(doc);
      added = true;
    }
    if (added) this.#options.onChange();
  }

  /** Queues a closed note for an exchange; `first` puts it ahead of the others (the renderer waits for it). */
  #enqueue(doc: ReplicatedDocument, first = false): void {
    if (doc.state !== "closed" || doc.removed) return;
    if (first) {
      const rest = [...this.#queued];
      this.#queued.clear();
      this.#queued.add(doc);
      for (const other of rest) this.#queued.add(other);
    } else {
      this.#queued.add(doc);
    }
    this.#options.onChange();
    void this.#openQueued();
  }

  /**
   * Takes queued notes a chunk per turn of the event loop while the socket is up and the server may
   * place notes (see {@link #notesAllowed}): closed notes without unconfirmed local changes are
   * pulled, {@link PULL_BATCH} per request (see {@link #pull}); the rest are exchanged one by
   * one, fewer than {@link MAX_IN_FLIGHT} at a time. {@link #settle} and a pull's end call it again.
   * Offline there is nothing to exchange, and what the status needs of a closed note (whether it
   * holds unconfirmed changes) the hub knows from the stored mark.
   */
  async #openQueued(): Promise<void> {
    if (this.#opening) return;
    this.#opening = true;
    try {
      while (this.#queued.size > 0 && !this.#stopped && this.#websocket.status === WebSocketStatus.Connected && this.#notesAllowed()) {
        // Notes still closing count too: their memory is not free until the hub has stored them.
        const room = Math.max(0, Math.min(OPEN_CHUNK, MAX_IN_FLIGHT - this.#inFlight.size - this.#closing));
        const pullRoom = this.#canPull() ? Math.min(PULL_BATCH, MAX_PULL_DOCUMENTS) : 0;
        if (room === 0 && pullRoom === 0) return;
        // From the front of the queue (copying a queue of thousands for each chunk would make a first replication quadratic).
        const toPull: ReplicatedDocument[] = [];
        const toExchange: ReplicatedDocument[] = [];
        let scanned = 0;
        for (const doc of this.#queued) {
          if ((toPull.length === pullRoom && toExchange.length === room) || scanned++ === MAX_QUEUE_SCAN) break;
          if (this.#pullable(doc)) {
            if (toPull.length < pullRoom) toPull.push(doc);
          } else if (toExchange.length < room) toExchange.push(doc);
        }
        if (toPull.length === 0 && toExchange.length === 0) return;
        for (const doc of [...toPull, ...toExchange]) {
          this.#queued.delete(doc);
          doc.state = "loading";
        }
        if (toPull.length > 0) void this.#pull(toPull);
        if (toExchange.length > 0) await this.#startExchanges(toExchange);
        // Lets the page, the host API and the renderer's own documents through between chunks.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.#opening = false;
    }
  }

  /** The server has the whole workspace (it allows a note only once the workspace lists it) and the first catch-up is read. */
  #notesAllowed(): boolean {
    return this.#docs.get(this.#workspaceName)?.upToDate === true && !this.#firstCatchUpPending;
  }

  #canPull(): boolean {
    return this.#pullsAvailable() && this.#pulls < MAX_PULLS_IN_FLIGHT;
  }

  #pullsAvailable(): boolean {
    return this.#options.pullDocuments !== undefined && !this.#pullUnavailable;
  }

  /**
   * Pulls are available and the note is one nobody here has in memory, without changes the server
   * has not confirmed, and not already sent to sync by a pull.
   */
  #pullable(doc: ReplicatedDocument): boolean {
    const hub = this.#options.hub;
    return this.#pullsAvailable() && !doc.exchangeOverSync && !hub.isLoaded(doc.name) && !hub.isUnsynced(doc.name);
  }

  /** Starts the exchanges of notes taken from the queue (already `loading`). */
  async #startExchanges(docs: readonly ReplicatedDocument[]): Promise<void> {
    for (const doc of docs) this.#inFlight.add(doc);
    // Read from disk together: hundreds of queries one by one would hold up every other query.
    const names = docs.map((doc) => doc.name);
    const stored = await (names.length > 1 ? this.#options.hub.preload(names) : Promise.resolve(undefined)).catch(() => undefined);
    // A note nobody here has in memory is exchanged from its stored bytes; one the hub holds
    // (the renderer's, or one recently used) through the hub's copy.
    await Promise.all(
      docs.map((doc) =>
        this.#options.hub.isLoaded(doc.name) ? this.#open(doc, stored?.get(doc.name)) : this.#exchange(doc, stored?.get(doc.name)),
      ),
    );
  }

  /**
   * Pulls closed notes in one request (note-pull.ts): what the server holds beyond each stored copy
   * is merged into it, and the note is in step without an exchange of its own over sync (for a first
   * replication of tens of thousands of notes, the difference between minutes and seconds on the
   * server). A note the pull does not settle, or all of them if the request fails, is queued again
   * for an exchange over sync.
   */
  async #pull(docs: readonly ReplicatedDocument[]): Promise<void> {
    const pullDocuments = this.#options.pullDocuments;
    if (!pullDocuments) return;
    const hub = this.#options.hub;
    this.#pulls += 1;
    for (const doc of docs) this.#pulling.add(doc);
    const marks = new Map<ReplicatedDocument, number>();
    // What the server answers is its state from about now: the catch-up overlap compares with this.
    const startedAt = performance.now();
    let outcomes: Map<string, PullOutcome> | undefined;
    try {
      const preloaded = await hub.preload(docs.map((doc) => doc.name));
      const stored = new Map<string, Uint8Array | undefined>();
      for (const doc of docs) {
        marks.set(doc, hub.localChangeMark(doc.name));
        stored.set(doc.name, await hub.storedState(doc.name, preloaded.get(doc.name)));
      }
      outcomes = await pullNotes(pullDocuments, stored);
    } catch (error) {
      // A server from before the pull route answers 404: exchanges only from now on.
      if (error instanceof TandemApiError && error.status === 404) this.#pullUnavailable = true;
      else if (!this.#stopped)
        console.warn("Tandem: could not pull notes, exchanging them over sync:", error instanceof Error ? error.message : error);
    }
    // Stored before the notes count as in step: "synced" speaks of what is on disk here.
    const failed = new Map<ReplicatedDocument, unknown>();
    await Promise.all(
      docs.map((doc) => {
        const outcome = outcomes?.get(doc.name);
        if (outcome?.kind !== "pulled" || !outcome.update || doc.removed || this.#stopped) return undefined;
        return hub.applyRemote(doc.name, outcome.update).catch((error: unknown) => failed.set(doc, error));
      }),
    );
    this.#pulls -= 1;
    for (const doc of docs) {
      if (!this.#pulling.delete(doc) || doc.removed || this.#stopped) continue;
      if (failed.has(doc)) this.#exchangeFailed(doc, failed.get(doc));
      else this.#settlePull(doc, outcomes?.get(doc.name) ?? EXCHANGE_OVER_SYNC, marks.get(doc), startedAt);
    }
    if (this.#stopped) return;
    this.#options.onChange();
    void this.#openQueued();
    this.#maybeSaveCursor();
    this.#maybeReleaseMemory();
  }

  #settlePull(doc: ReplicatedDocument, outcome: PullOutcome, mark: number | undefined, startedAt: number): void {
    const hub = this.#options.hub;
    doc.state = "closed";
    if (outcome.kind === "exchange") {
      doc.exchangeOverSync = true;
      this.#enqueue(doc);
      return;
    }
    doc.exchangeStartedAt = startedAt;
    this.#stored.add(doc.name);
    this.#exchangedSinceRelease += 1;
    // Opened by the renderer meanwhile (it then replicates live, first), or changed here since its copy was read.
    if (hub.isLoaded(doc.name)) this.#enqueue(doc, true);
    else if (hub.localChangeMark(doc.name) !== mark) this.#enqueue(doc);
  }

  /** Counts a document as replicated from now on; {@link #open} makes it so. */
  #reserve(name: string): ReplicatedDocument {
    const doc = new ReplicatedDocument(name, this.#onClosedChange);
    this.#docs.set(name, doc);
    this.#notClosed.add(doc);
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
      this.#notClosed.delete(doc);
      this.#inFlight.delete(doc);
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

  /**
   * Brings a closed note in step from its stored copy, without opening it here (see
   * {@link StoredExchange}); it queues for its turn to authenticate like an opened one.
   */
  async #exchange(doc: ReplicatedDocument, preloaded?: PreloadedDocument): Promise<void> {
    const { name } = doc;
    const hub = this.#options.hub;
    let stored: Uint8Array | undefined;
    try {
      stored = await hub.storedState(name, preloaded);
    } catch (error) {
      this.#exchangeFailed(doc, error);
      return;
    }
    if (doc.removed || this.#stopped || doc.state !== "loading") return;
    // Loaded meanwhile (the renderer opened it): the hub's copy may be ahead of the stored one.
    if (hub.isLoaded(name)) return this.#open(doc);
    doc.localMark = hub.localChangeMark(name);
    doc.exchange = new StoredExchange({
      name,
      token: this.#options.apiKey,
      websocket: this.#websocket,
      stored: stored ?? EMPTY_UPDATE,
      onAuthenticated: () => this.#onAuthenticated(doc),
      onRefused: (reason) => this.#onRefused(doc, reason),
      onReceived: (update) => hub.applyRemote(name, update),
      onThrough: () => this.#exchanged(doc),
      onFailed: (error) => this.#exchangeFailed(doc, error),
    });
    doc.state = "waiting";
    this.#waiting.add(doc);
    this.#pump();
    this.#options.onChange();
  }

  /** An exchange from stored bytes is through: the server has what was stored, this machine what the server had. */
  #exchanged(doc: ReplicatedDocument): void {
    if (doc.state !== "live" || !doc.exchange) return;
    const hub = this.#options.hub;
    this.#release(doc);
    this.#inFlight.delete(doc);
    doc.state = "closed";
    doc.exchangeOverSync = false;
    this.#stored.add(doc.name);
    // Confirmed is only what was stored when the exchange began; a change made here since goes next,
    // and a note the renderer opened meanwhile goes live (first).
    if (hub.localChangeMark(doc.name) === doc.localMark) hub.markSynced(doc.name);
    if (hub.isLoaded(doc.name)) this.#enqueue(doc, true);
    else if (hub.localChangeMark(doc.name) !== doc.localMark) this.#enqueue(doc);
    this.#options.onChange();
    void this.#openQueued();
    this.#maybeSaveCursor();
    this.#exchangedSinceRelease += 1;
    this.#maybeReleaseMemory();
  }

  /** A burst of exchanges is over: the memory it grew goes back to the system. */
  #maybeReleaseMemory(): void {
    if (this.#exchangedSinceRelease < RELEASE_MEMORY_AFTER || this.#queued.size > 0 || this.#inFlight.size > 0 || this.#pulling.size > 0)
      return;
    this.#exchangedSinceRelease = 0;
    // On the next turn: the status (now synced) goes out first.
    setImmediate(() => {
      if (this.#stopped) return;
      this.#options.hub.compactDocuments();
      releaseMemory();
    });
  }

  /** Reading the stored copy, or storing what came, failed: the note is tried again later. */
  #exchangeFailed(doc: ReplicatedDocument, error: unknown): void {
    if (!this.#stopped) console.error(`Tandem: could not exchange ${doc.name}:`, error instanceof Error ? error.message : error);
    this.#release(doc);
    this.#inFlight.delete(doc);
    this.#waiting.delete(doc);
    doc.state = "closed";
    clearTimeout(doc.retryTimer);
    doc.retryTimer = setTimeout(() => this.#enqueue(doc), REFUSED_RETRY_MS);
    doc.retryTimer.unref();
    this.#options.onChange();
    void this.#openQueued();
  }

  async #remove(doc: ReplicatedDocument): Promise<void> {
    doc.removed = true;
    if (this.#docs.get(doc.name) === doc) this.#docs.delete(doc.name);
    this.#notClosed.delete(doc);
    this.#waiting.delete(doc);
    this.#queued.delete(doc);
    this.#idle.delete(doc);
    this.#inFlight.delete(doc);
    this.#pulling.delete(doc);
    this.#release(doc);
    this.#options.onChange();
    // The local copy stays on disk: undoing the removal brings it back without a download.
    await doc.connection?.disconnect().catch(() => {});
  }

  /** Stops replicating one document (its provider or exchange is gone; the hub's copy is not touched). */
  #release(doc: ReplicatedDocument): void {
    if (doc.state === "authenticating") this.#authenticating -= 1;
    // The server has (or is about to have) a connection for it, which the CLOSE below ends.
    const held = (doc.state === "authenticating" || doc.state === "live") && (doc.provider !== undefined || doc.exchange !== undefined);
    clearTimeout(doc.retryTimer);
    doc.provider?.destroy();
    doc.provider = undefined;
    // The server is told to let go of its copy, as a provider's detach does.
    doc.exchange?.destroy(true);
    doc.exchange = undefined;
    doc.state = "waiting";
    if (held && !this.#stopped && this.#websocket.status === WebSocketStatus.Connected) this.#holdName(doc.name);
  }

  /** Keeps `name` from being attached again until the server has answered its CLOSE. */
  #holdName(name: string): void {
    this.#closingNames.get(name)?.release();
    const sink = new ClosingSink(name, this.#websocket, () => {
      if (this.#closingNames.get(name) !== sink) return;
      this.#closingNames.delete(name);
      if (!this.#stopped) this.#pump();
    });
    this.#closingNames.set(name, sink);
  }

  /**
   * Closes a note in step with the server: the provider goes (the server closes its copy too) and
   * the hub stores and unloads its copy, unless the renderer still has it open.
   */
  #close(doc: ReplicatedDocument): void {
    this.#idle.delete(doc);
    this.#inFlight.delete(doc);
    this.#waiting.delete(doc);
    this.#release(doc);
    doc.state = "closed";
    doc.exchangeOverSync = false;
    this.#stored.add(doc.name);
    const connection = doc.connection;
    doc.connection = undefined;
    if (!connection) return;
    this.#closing += 1;
    void connection
      .disconnect()
      .catch(() => {})
      .finally(() => {
        this.#closing -= 1;
        void this.#openQueued();
      });
  }

  /** A note is through its exchange: kept open while used or recently used, closed beyond `keepOpen`. */
  #settle(doc: ReplicatedDocument): void {
    if (!doc.name.startsWith("note:") || doc.state === "closed" || this.#options.hub.isOpen(doc.name)) return;
    this.#idle.delete(doc);
    this.#idle.add(doc);
    for (const oldest of this.#idle) {
      if (this.#idle.size <= this.#keepOpen) break;
      this.#close(oldest);
    }
    void this.#openQueued();
    this.#maybeSaveCursor();
  }

  /** Attaches waiting documents while there is room for more to authenticate. */
  #pump(): void {
    if (this.#stopped || this.#websocket.status !== WebSocketStatus.Connected) return;
    const notesAllowed = this.#notesAllowed();
    for (const doc of this.#waiting) {
      if (this.#authenticating >= this.#maxAuthenticating) return;
      if ((doc.name.startsWith("note:") && !notesAllowed) || this.#closingNames.has(doc.name)) continue;
      this.#waiting.delete(doc);
      doc.state = "authenticating";
      this.#authenticating += 1;
      // Its sync step 1 goes out now: the server answers with what it holds from here on.
      doc.exchangeStartedAt = performance.now();
      doc.provider?.attach();
      doc.exchange?.attach();
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
    // A refused note waits for its retry outside the bound on notes in flight.
    this.#inFlight.delete(doc);
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
    void this.#openQueued();
    this.#options.onChange();
  }

  #onProgress(doc: ReplicatedDocument): void {
    if (doc.upToDate) {
      this.#inFlight.delete(doc);
      this.#options.hub.markSynced(doc.name);
      if (doc.name === this.#workspaceName) {
        // The server now has the whole workspace: notes it lists may authenticate, and the change
        // feed names only notes the server can place.
        this.#pump();
        void this.#openQueued();
        void this.#catchUp();
      }
      this.#settle(doc);
    }
    this.#options.onChange();
  }

  /**
   * Reads the change feed from where the last catch-up got to (a little before, see
   * {@link DEFAULT_CATCH_UP_OVERLAP_MS}) and queues the closed notes it names; from the start when this
   * machine has never caught up (every note then gets one exchange). Runs again every
   * `catchUpIntervalMs` while connected. The position is saved only once every queued note is
   * through, so a catch-up cut short by a restart or a lost connection is read again.
   */
  async #catchUp(): Promise<void> {
    if (this.#catchingUp || this.#stopped) return;
    this.#catchingUp = true;
    clearTimeout(this.#catchUpTimer);
    let saved: DocumentChangesPosition | null = null;
    let reached: DocumentChangesPosition | null = null;
    try {
      saved = this.#pendingCursor ?? (await this.#options.cursor.load());
      let from: { since: string; after?: string } | null =
        saved && this.#catchUpOverlapMs > 0 ? { since: new Date(Date.parse(saved.since) - this.#catchUpOverlapMs).toISOString() } : saved;
      reached = saved;
      for (;;) {
        const page = await this.#options.fetchChanges(from);
        if (this.#stopped) return;
        const reach = this.#reach;
        // Every note of this page was stored at or before the position a read already reached.
        const overlapOnly = reach !== null && page.position !== null && atOrBefore(page.position, reach.position);
        for (const name of page.documents) {
          const doc = this.#docs.get(name);
          if (doc?.state !== "closed") continue;
          if (overlapOnly && doc.exchangeStartedAt > reach.readAt) continue;
          this.#enqueue(doc);
        }
        if (page.position) reached = page.position;
        if (!page.more || !page.position) break;
        from = page.position;
      }
      if (reached && (this.#reach === null || !atOrBefore(reached, this.#reach.position))) {
        this.#reach = { position: reached, readAt: performance.now() };
      }
      this.#pendingCursor = reached;
      this.#maybeSaveCursor();
    } catch (error) {
      if (!this.#stopped) console.warn("Tandem: could not read the server's changes:", error instanceof Error ? error.message : error);
      // The pages read are not lost: their notes are queued, so the next catch-up goes on from there
      // (a first one from the beginning would otherwise queue every note again).
      if (reached !== saved) {
        this.#pendingCursor = reached;
        this.#maybeSaveCursor();
      }
    } finally {
      this.#catchingUp = false;
      if (this.#firstCatchUpPending) {
        this.#firstCatchUpPending = false;
        this.#pump();
        void this.#openQueued();
      }
      if (!this.#stopped) {
        this.#catchUpTimer = setTimeout(() => {
          if (this.#websocket.status === WebSocketStatus.Connected && this.#docs.get(this.#workspaceName)?.upToDate) void this.#catchUp();
        }, this.#catchUpIntervalMs);
        this.#catchUpTimer.unref();
      }
    }
  }

  /** Saves the position of the latest catch-up once no note is left queued or in flight. */
  #maybeSaveCursor(): void {
    const reached = this.#pendingCursor;
    if (reached === null || this.#queued.size > 0 || this.#inFlight.size > 0 || this.#pulling.size > 0) return;
    this.#pendingCursor = null;
    // Only once what the exchanges brought is on disk: a position saved ahead of it would skip it after a crash.
    void this.#options.hub
      .flushRemote()
      .then(() => this.#options.cursor.save(reached))
      .catch(() => {});
  }

  /** The socket is down: every open document waits for its turn again once it is back. */
  #detachAll(): void {
    if (this.#stopped || this.#websocket.status === WebSocketStatus.Connected) return;
    this.#authenticating = 0;
    for (const sink of [...this.#closingNames.values()]) sink.release();
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
    doc.exchange?.detach(false);
    if (!doc.provider) return;
    this.#websocket.configuration.providerMap.delete(doc.provider.effectiveName);
    doc.provider.detach();
  }
}
