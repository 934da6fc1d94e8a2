import type { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as Y from "yjs";

/** The Hocuspocus wire's message types and sub-types this exchange speaks (`@hocuspocus/common`, y-protocols). */
const MESSAGE_SYNC = 0;
const MESSAGE_AUTH = 2;
const MESSAGE_CLOSE = 7;
const MESSAGE_SYNC_STATUS = 8;
const SYNC_STEP_1 = 0;
const SYNC_STEP_2 = 1;
const SYNC_UPDATE = 2;
const AUTH_TOKEN = 0;
const AUTH_PERMISSION_DENIED = 1;
const AUTH_AUTHENTICATED = 2;
/** Sent after the token as the provider does; the server only logs it. */
const CLIENT_VERSION = "tandem-stored-exchange";

/** An update with no content: no structs, no deletions (how Yjs encodes an empty document or an empty diff). */
export function isEmptyUpdate(update: Uint8Array): boolean {
  return update.byteLength <= 2 && update.every((byte) => byte === 0);
}

export interface StoredExchangeOptions {
  readonly name: string;
  readonly token: string;
  readonly websocket: HocuspocusProviderWebsocket;
  /** The document as stored here (one Yjs update; an empty document's when there is no copy yet). */
  readonly stored: Uint8Array;
  readonly onAuthenticated: () => void;
  readonly onRefused: (reason: string) => void;
  /**
   * What this machine lacked, from the server; answers once it is stored. The exchange does not
   * wait for that (the disk must not set the pace of a first replication): whoever saves how far
   * replication got waits for the stores instead (`LocalHub.flushRemote`).
   */
  readonly onReceived: (update: Uint8Array) => Promise<void>;
  /** Both sides hold what the other had (what came in is handed to `onReceived`). */
  readonly onThrough: () => void;
  /** Storing what came in failed (the note is tried again later). */
  readonly onFailed: (error: unknown) => void;
}

/**
 * One note brought in step with the server from its stored bytes, without a `Y.Doc` on this
 * machine: the y-protocols exchange a provider does (sync step 1 with the stored state vector,
 * the server's step 2 merged into the stored state, the server's step 1 answered with
 * `Y.diffUpdate` of the stored state), spoken on the shared socket. A provider would build the
 * whole document in memory to do the same; for a first replication of tens of thousands of notes
 * that is most of the host's work and memory.
 *
 * It takes a provider's place in the socket's routing map, so it offers the little the socket
 * calls on one: `effectiveName`, `isAuthenticated`, `onOpen` and `onMessage`.
 */
export class StoredExchange {
  readonly effectiveName: string;
  isAuthenticated = false;
  readonly #options: StoredExchangeOptions;
  #stored: Uint8Array;
  #lastReceived: Uint8Array | undefined;
  #attached = false;
  /** Where this run of the exchange stands (a reconnect starts it again). */
  #received = false;
  #answered = false;
  #unacknowledged = 0;
  #done = false;

  constructor(options: StoredExchangeOptions) {
    this.#options = options;
    this.effectiveName = options.name;
    this.#stored = options.stored;
  }

  /** Joins the socket (it must be connected): the token and sync step 1 go out at once. */
  attach(): void {
    if (this.#attached || this.#done) return;
    this.#attached = true;
    this.#options.websocket.attach(this as unknown as HocuspocusProvider);
  }

  /** Leaves the socket; with `close` the server is told to let go of its copy. */
  detach(close: boolean): void {
    if (!this.#attached) return;
    this.#attached = false;
    this.isAuthenticated = false;
    const providers = this.#options.websocket.configuration.providerMap;
    if (providers.get(this.effectiveName) === (this as unknown as HocuspocusProvider)) providers.delete(this.effectiveName);
    if (close) this.#send((encoder) => encoding.writeVarUint(encoder, MESSAGE_CLOSE));
  }

  /** Ends it for good (a through exchange is finished, or the note is no longer replicated). */
  destroy(close: boolean): void {
    this.detach(close);
    this.#done = true;
  }

  /** Whether this run is through: see {@link StoredExchangeOptions.onThrough}. */
  get through(): boolean {
    return this.#received && this.#answered && this.#unacknowledged === 0;
  }

  /** Called by the socket when this joins an open socket (and on every reopen while attached). */
  onOpen(): void {
    if (!this.#attached) return;
    this.isAuthenticated = false;
    this.#received = false;
    this.#answered = false;
    this.#unacknowledged = 0;
    this.#send((encoder) => {
      encoding.writeVarUint(encoder, MESSAGE_AUTH);
      encoding.writeVarUint(encoder, AUTH_TOKEN);
      encoding.writeVarString(encoder, this.#options.token);
      encoding.writeVarString(encoder, CLIENT_VERSION);
    });
    this.#send((encoder) => {
      encoding.writeVarUint(encoder, MESSAGE_SYNC);
      encoding.writeVarUint(encoder, SYNC_STEP_1);
      encoding.writeVarUint8Array(encoder, Y.encodeStateVectorFromUpdate(this.#stored));
    });
  }

  /** Called by the socket with every message addressed to this document. */
  onMessage(event: { data: ArrayBuffer | Uint8Array }): void {
    if (!this.#attached || this.#done) return;
    const decoder = decoding.createDecoder(event.data instanceof Uint8Array ? event.data : new Uint8Array(event.data));
    decoding.readVarString(decoder);
    const type = decoding.readVarUint(decoder);
    if (type === MESSAGE_AUTH) this.#onAuth(decoder);
    else if (type === MESSAGE_SYNC) this.#onSync(decoder);
    else if (type === MESSAGE_SYNC_STATUS) this.#onSyncStatus(decoding.readVarInt(decoder) === 1);
    else if (type === MESSAGE_CLOSE) {
      this.detach(false);
      this.#options.onRefused(`closed by the server: ${decoding.readVarString(decoder)}`);
    }
    // Awareness and stateless messages mean nothing to a document nobody here is editing.
  }

  #onAuth(decoder: decoding.Decoder): void {
    const kind = decoding.readVarUint(decoder);
    if (kind === AUTH_AUTHENTICATED) {
      this.isAuthenticated = true;
      this.#options.onAuthenticated();
    } else if (kind === AUTH_PERMISSION_DENIED) {
      const reason = decoding.readVarString(decoder);
      this.detach(false);
      this.#options.onRefused(reason);
    } else if (kind === AUTH_TOKEN) {
      // The server asks for the token again.
      this.onOpen();
    }
  }

  #onSync(decoder: decoding.Decoder): void {
    const step = decoding.readVarUint(decoder);
    if (step === SYNC_STEP_1) {
      // What the server lacks of the stored state, as a provider answers from its document.
      const serverVector = decoding.readVarUint8Array(decoder);
      const missing = Y.diffUpdate(this.#stored, serverVector);
      this.#unacknowledged += 1;
      this.#send((encoder) => {
        encoding.writeVarUint(encoder, MESSAGE_SYNC);
        encoding.writeVarUint(encoder, SYNC_STEP_2);
        encoding.writeVarUint8Array(encoder, missing);
      });
      this.#answered = true;
      return;
    }
    if (step === SYNC_STEP_2 || step === SYNC_UPDATE) {
      const update = decoding.readVarUint8Array(decoder);
      if (step === SYNC_STEP_2) this.#received = true;
      this.#store(update);
      this.#maybeThrough();
    }
  }

  #onSyncStatus(applied: boolean): void {
    if (!applied) {
      // The server did not take our part (a read-only key): nothing here is confirmed.
      this.detach(false);
      this.#options.onRefused("the server did not accept the changes");
      return;
    }
    this.#unacknowledged = Math.max(0, this.#unacknowledged - 1);
    this.#maybeThrough();
  }

  #store(update: Uint8Array): void {
    // An empty update (nothing new) needs no write; nor does the same update again (the server sends
    // a document it has just loaded both as step 2 and as an update).
    if (isEmptyUpdate(update) || (this.#lastReceived && Buffer.compare(this.#lastReceived, update) === 0)) return;
    this.#lastReceived = update;
    // Nothing stored yet (a first replication): the update is the whole document, no merge needed.
    this.#stored = isEmptyUpdate(this.#stored) ? update : Y.mergeUpdates([this.#stored, update]);
    this.#options.onReceived(update).catch((error: unknown) => {
      this.destroy(true);
      this.#options.onFailed(error);
    });
  }

  #maybeThrough(): void {
    if (this.#attached && !this.#done && this.through) this.#options.onThrough();
  }

  #send(write: (encoder: encoding.Encoder) => void): void {
    const encoder = encoding.createEncoder();
    encoding.writeVarString(encoder, this.effectiveName);
    write(encoder);
    this.#options.websocket.send(encoding.toUint8Array(encoder));
  }
}
