import type { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import * as decoding from "lib0/decoding";

/** The Hocuspocus wire's message types this listens for (`@hocuspocus/common`). */
const MESSAGE_AUTH = 2;
const MESSAGE_CLOSE = 7;
/** A server that never answers (it went away) does not hold the name for longer than this. */
const GIVE_UP_MS = 10_000;

/**
 * Holds a document's name on the shared socket after its provider or exchange has gone, until the
 * server has answered the CLOSE that went with it. The server answers a client's CLOSE with a CLOSE of
 * its own, addressed by the document's name: a provider attached for the same document in between
 * (the renderer opening a note just exchanged, say) would take that answer as the server closing *its*
 * connection and wait for acknowledgements that never come. So the next one attaches only once the name
 * is free again: the answer arrived (or a refusal, when the token was still being checked), the socket
 * reopened (the server forgot the old connection), or {@link GIVE_UP_MS} passed.
 *
 * It sits in the socket's routing map in a provider's place, offering the little the socket calls on one.
 */
export class ClosingSink {
  readonly effectiveName: string;
  readonly isAuthenticated = false;
  readonly #websocket: HocuspocusProviderWebsocket;
  readonly #onFree: () => void;
  readonly #timer: ReturnType<typeof setTimeout>;
  #free = false;

  constructor(name: string, websocket: HocuspocusProviderWebsocket, onFree: () => void) {
    this.effectiveName = name;
    this.#websocket = websocket;
    this.#onFree = onFree;
    websocket.configuration.providerMap.set(name, this as unknown as HocuspocusProvider);
    this.#timer = setTimeout(() => this.release(), GIVE_UP_MS);
    this.#timer.unref();
  }

  /** The socket reopened: the server has no connection for this name any more. */
  onOpen(): void {
    this.release();
  }

  onMessage(event: { data: ArrayBuffer | Uint8Array }): void {
    const decoder = decoding.createDecoder(event.data instanceof Uint8Array ? event.data : new Uint8Array(event.data));
    decoding.readVarString(decoder);
    const type = decoding.readVarUint(decoder);
    if (type === MESSAGE_CLOSE || type === MESSAGE_AUTH) this.release();
    // Anything else is the old connection's last words: nobody is listening for them.
  }

  /** Frees the name (also when the socket went down: the server forgets the connection with it). */
  release(): void {
    if (this.#free) return;
    this.#free = true;
    clearTimeout(this.#timer);
    const providers = this.#websocket.configuration.providerMap;
    if (providers.get(this.effectiveName) === (this as unknown as HocuspocusProvider)) providers.delete(this.effectiveName);
    this.#onFree();
  }
}
