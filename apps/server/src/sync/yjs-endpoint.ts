import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { AuthMessageType, ConnectionTimeout, writeAuthentication } from "@hocuspocus/common";
import { type Hocuspocus, MessageType, type WebSocketLike } from "@hocuspocus/server";
import { parseDocName } from "@tandem/core";
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import { type WebSocket, WebSocketServer } from "ws";
import { writePermissionDenied } from "y-protocols/auth";
import type { Logger } from "../logger";
import type { SharedState } from "../shared/shared-state";
import { REVOKED } from "./connection-guard";
import type { AccessRefusal } from "./credential-access";
import type { RefusalReason } from "./update-limits";
import { toBytes, toFetchRequest } from "./websocket-request";

/** y-websocket clients connect to `/yjs/<document name>`; the provider's `serverUrl` is `ws://host:port/yjs`. */
export const YJS_PATH = "/yjs";

/** The subprotocol a browser offers, beside its credential, to send the credential without a query parameter. */
export const YJS_SUBPROTOCOL = "tandem";

/** The largest awareness message a client may send (a cursor and a name take a few hundred bytes). */
export const YJS_AWARENESS_MAX_BYTES = 64 * 1024;

/**
 * What bounds one client on `/yjs` (settings: docs/operating.md): the sockets one credential
 * holds open at once over every instance (y-websocket opens one per document), and the awareness
 * messages one socket may send at once, then per second (far above a cursor following fast typing).
 */
export interface YjsLimits {
  readonly socketsPerCredential: number;
  readonly awarenessBurst: number;
  readonly awarenessPerSecond: number;
}

/** Who a credential is, for counting its sockets (`credentialKey`); null when it is none that syncs. */
export type CredentialIdentity = (token: string) => Promise<string | null>;

/** The shared-state slots a `/yjs` socket holds while open, one per socket, under its credential. */
const SOCKET_SLOTS = "yjs-sockets";

const UPDATE_REFUSALS = {
  document_too_large: 4413,
  storage_quota_exceeded: 4413,
  too_deeply_nested: 4422,
  // The client's next connection sends everything the server lacks (sync step 2), parents included.
  unknown_parent: 4509,
} as const satisfies Record<RefusalReason, number>;

/**
 * How a `/yjs` socket is closed: the code, and the reason sent with it. y-websocket's provider
 * stops reconnecting on 4400–4499 (and emits `closed`): reconnecting cannot help. On anything else
 * it reconnects with backoff. docs/sync.md explains each.
 */
export const YJS_CLOSE_CODES = {
  bad_message: 4400,
  unauthorized: 4401,
  forbidden: 4403,
  access_revoked: 4403,
  awareness_too_large: 4413,
  ...UPDATE_REFUSALS,
  reset: 4500,
  connection_timeout: 4508,
  too_many_documents: 4529,
  too_many_awareness_updates: 4529,
} as const satisfies Record<AccessRefusal, number> & Record<string, number>;

export type YjsCloseReason = keyof typeof YJS_CLOSE_CODES;

const isCloseReason = (reason: string): reason is YjsCloseReason => Object.hasOwn(YJS_CLOSE_CODES, reason);

/** The message types a y-websocket client sends: the first of Hocuspocus's, numbered alike. */
const SYNC = MessageType.Sync;
const AWARENESS = MessageType.Awareness;
const QUERY_AWARENESS = MessageType.QueryAwareness;
/** What the socket tells a read-only client that sent a change (y-websocket logs it). */
const READ_ONLY = "read_only";

/** Earns `perSecond` tokens a second up to `burst`; one socket's, so nothing is shared or awaited. */
class TokenBucket {
  #tokens: number;
  #at = performance.now();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
  ) {
    this.#tokens = burst;
  }

  take(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.perSecond);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

function frame(write: (encoder: encoding.Encoder) => void): Uint8Array {
  const encoder = encoding.createEncoder();
  write(encoder);
  return encoding.toUint8Array(encoder);
}

/** A sync message as y-protocols frames it: its type, then one length-prefixed payload, and nothing after. */
function wellFormedSync(message: Uint8Array): boolean {
  try {
    const decoder = decoding.createDecoder(message);
    decoding.readVarUint(decoder);
    if (decoding.readVarUint(decoder) > 2) return false;
    decoding.readVarUint8Array(decoder);
    return !decoding.hasContent(decoder);
  } catch {
    return false;
  }
}

/**
 * One y-websocket socket, presented to Hocuspocus as a Hocuspocus socket carrying one document.
 * y-websocket speaks y-protocols' sync and awareness messages bare; Hocuspocus prefixes each with
 * the document's name and adds its own (authentication, acknowledgements, closing a document). So
 * frames from the client gain the name, and frames to it lose it; what y-websocket cannot read
 * becomes what it can: a refused credential or an update refused to a read-only client is
 * y-protocols' "permission denied", and a document closed by the server is the socket closed
 * with a code from {@link YJS_CLOSE_CODES}.
 */
class YjsSocket implements WebSocketLike {
  readonly #websocket: WebSocket;
  /** The document's name as Hocuspocus frames it, put in front of each message from the client. */
  readonly #address: Uint8Array;
  readonly #awareness: TokenBucket;
  #ending = false;

  constructor(
    websocket: WebSocket,
    readonly documentName: string,
    limits: YjsLimits,
    private readonly onEnd: (reason: YjsCloseReason) => void,
  ) {
    this.#websocket = websocket;
    this.#awareness = new TokenBucket(limits.awarenessBurst, limits.awarenessPerSecond);
    this.#address = frame((encoder) => encoding.writeVarString(encoder, documentName));
  }

  get readyState(): number {
    return this.#websocket.readyState;
  }

  /** The first message Hocuspocus reads: the credential, as a Hocuspocus provider sends it. */
  authentication(token: string): Uint8Array {
    return frame((encoder) => {
      encoding.writeUint8Array(encoder, this.#address);
      encoding.writeVarUint(encoder, MessageType.Auth);
      writeAuthentication(encoder, token);
      encoding.writeVarString(encoder, "y-websocket");
    });
  }

  /** A message from the client, addressed for Hocuspocus; undefined when it is not passed on. */
  fromClient(message: Uint8Array): Uint8Array | undefined {
    if (this.#ending) return undefined;
    switch (message[0]) {
      case SYNC:
        if (!wellFormedSync(message)) return this.end("bad_message");
        break;
      case AWARENESS:
        if (message.length > YJS_AWARENESS_MAX_BYTES) return this.end("awareness_too_large");
        if (!this.#awareness.take()) return this.end("too_many_awareness_updates");
        break;
      // Hocuspocus answers a query only to its own clients; other clients' states reach this one as they change.
      case QUERY_AWARENESS:
        return undefined;
      default:
        return this.end("bad_message");
    }
    const addressed = new Uint8Array(this.#address.length + message.length);
    addressed.set(this.#address);
    addressed.set(message, this.#address.length);
    return addressed;
  }

  /** A message from Hocuspocus to the client (it prefixes each with the document's name). */
  send(data: string | ArrayBufferLike | Blob | ArrayBufferView): void {
    if (this.#ending) return;
    const message = data as Uint8Array;
    const decoder = decoding.createDecoder(message);
    decoding.readVarString(decoder);
    const start = decoder.pos;
    switch (decoding.readVarUint(decoder)) {
      case MessageType.Sync:
      case MessageType.Awareness:
      case MessageType.QueryAwareness:
        // Shared by every connection to the document: sent as a view, never changed.
        this.#websocket.send(message.subarray(start));
        return;
      case MessageType.Auth:
        if (decoding.readVarUint(decoder) === AuthMessageType.PermissionDenied) {
          const reason = decoding.readVarString(decoder);
          this.#tell(reason);
          // Ours say why; any other reason is a failure of the server's (a document that would not load).
          this.end(reason === "unauthorized" || reason === "forbidden" ? reason : "reset");
        }
        return;
      case MessageType.SyncStatus:
        // Hocuspocus acknowledges each change; 0 means it was refused, which only a read-only connection meets.
        if (decoding.readVarUint(decoder) === 0) this.#tell(READ_ONLY);
        return;
      case MessageType.CLOSE: {
        const reason = decoding.readVarString(decoder);
        if (reason === REVOKED.reason) this.end("access_revoked");
        else this.end(isCloseReason(reason) ? reason : "reset");
        return;
      }
      default:
      // Stateless messages, pings: nothing y-websocket reads.
    }
  }

  /** Hocuspocus closing the socket itself: it went silent too long, or broke a limit of Hocuspocus's own. */
  close(code?: number): void {
    this.end(code === ConnectionTimeout.code ? "connection_timeout" : "reset");
  }

  /** Closes the socket with `reason`'s code; what the client sends after that is dropped. */
  end(reason: YjsCloseReason): undefined {
    if (this.#ending) return;
    this.#ending = true;
    this.onEnd(reason);
    this.#websocket.close(YJS_CLOSE_CODES[reason], reason);
  }

  /** Refuses the socket before Hocuspocus sees it, as Hocuspocus refuses one. */
  refuse(reason: YjsCloseReason): void {
    this.#tell(reason);
    this.end(reason);
  }

  /** y-protocols' "permission denied", which y-websocket's provider logs with the reason. */
  #tell(reason: string): void {
    this.#websocket.send(
      frame((encoder) => {
        encoding.writeVarUint(encoder, MessageType.Auth);
        writePermissionDenied(encoder, reason);
      }),
    );
  }
}

/** The document name a `/yjs/…` path names, or undefined when it names none Tandem has. */
function documentNameOf(pathname: string): string | undefined {
  try {
    const name = decodeURIComponent(pathname.slice(YJS_PATH.length + 1));
    return parseDocName(name) ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The subprotocols a client offered, in order. */
function offeredProtocols(request: IncomingMessage): string[] {
  return (request.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== "");
}

/**
 * The credential a client presents: the `token` query parameter (the provider's `params`), or,
 * beside the subprotocol `tandem`, as a subprotocol of its own (kept out of URLs proxies log).
 */
function credentialOf(url: URL, request: IncomingMessage): string | undefined {
  const protocols = offeredProtocols(request);
  const fromProtocol = protocols.includes(YJS_SUBPROTOCOL) ? protocols.find((p) => p !== YJS_SUBPROTOCOL) : undefined;
  return url.searchParams.get("token") || fromProtocol || undefined;
}

/** The request Hocuspocus's hooks see: without the credential, so nothing downstream can log it. */
function withoutCredential(request: IncomingMessage, url: URL): Request {
  const forwarded = toFetchRequest(request);
  const headers = new Headers(forwarded.headers);
  headers.delete("sec-websocket-protocol");
  const bare = new URL(url);
  bare.searchParams.delete("token");
  return new Request(bare, { headers });
}

/**
 * `/yjs/<document name>`: the documents of the sync hub for any y-websocket client (the Yjs
 * ecosystem's `WebsocketProvider`). Each socket is handed to the same Hocuspocus as `/sync`'s
 * through {@link YjsSocket}, so authentication, access and its re-checks, update limits, quotas,
 * read-only connections, storage and the relay between instances are `/sync`'s own. Added here:
 * what one socket per document needs (a bound on sockets per credential, counted in the shared
 * state, so over every instance) and what y-websocket clients send unchecked (awareness, bounded in
 * size and rate).
 */
export class YjsEndpoint {
  readonly #sockets: WebSocketServer;

  constructor(
    private readonly hocuspocus: Hocuspocus,
    private readonly dependencies: {
      readonly maxPayload: number;
      readonly limits: YjsLimits;
      /** Who a credential is (`credentialKey`), to count its sockets under. */
      readonly identify: CredentialIdentity;
      readonly shared: SharedState;
      readonly logger: Logger;
    },
  ) {
    const { maxPayload } = dependencies;
    this.#sockets = new WebSocketServer({
      noServer: true,
      maxPayload,
      // A browser fails a socket whose server picks none of the subprotocols it offered.
      handleProtocols: (protocols) => (protocols.has(YJS_SUBPROTOCOL) ? YJS_SUBPROTOCOL : false),
    });
  }

  /** Whether an upgrade to this path is this endpoint's. */
  static claims(pathname: string): boolean {
    return pathname.startsWith(`${YJS_PATH}/`);
  }

  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#sockets.handleUpgrade(request, socket, head, (websocket) => void this.#accept(websocket, request));
  }

  /**
   * Admits a socket: its credential must be one that syncs and hold a free socket slot; then the
   * socket is handed to Hocuspocus, which checks the credential against the document. What the
   * client sends meanwhile (y-websocket sends at once) waits, checked, and follows in order.
   */
  async #accept(websocket: WebSocket, request: IncomingMessage): Promise<void> {
    const { logger, limits } = this.dependencies;
    const url = new URL(request.url ?? "/", "http://localhost");
    const name = documentNameOf(url.pathname);
    const token = credentialOf(url, request);
    if (token === undefined || name === undefined) {
      const reason = token === undefined ? "unauthorized" : "forbidden";
      websocket.close(YJS_CLOSE_CODES[reason], reason);
      return;
    }
    const yjs = new YjsSocket(websocket, name, limits, (reason) =>
      logger.debug({ document: name, code: YJS_CLOSE_CODES[reason], reason }, "yjs socket closed by the server"),
    );
    websocket.on("error", (error) => logger.debug({ err: error }, "yjs socket error"));
    const waiting: Uint8Array[] = [];
    let connection: ReturnType<Hocuspocus["handleConnection"]> | undefined;
    let release: (() => void) | undefined;
    let closed = false;
    websocket.on("message", (data) => {
      const message = yjs.fromClient(toBytes(data));
      if (!message) return;
      if (connection) connection.handleMessage(message);
      else waiting.push(message);
    });
    websocket.on("close", (code, reason) => {
      closed = true;
      release?.();
      connection?.handleClose({ code, reason: reason.toString() });
    });

    try {
      const credential = await this.dependencies.identify(token);
      if (credential === null) return yjs.refuse("unauthorized");
      release = (await this.dependencies.shared.acquireSlot(SOCKET_SLOTS, credential, limits.socketsPerCredential)) ?? undefined;
    } catch (error) {
      logger.warn({ err: error }, "could not admit a yjs socket");
      return yjs.end("reset");
    }
    if (!release) return yjs.refuse("too_many_documents");
    // Gone while it waited (or refused by a check of its first messages): the slot goes back at once.
    if (closed || websocket.readyState !== websocket.OPEN) return release();

    connection = this.hocuspocus.handleConnection(yjs, withoutCredential(request, url));
    connection.handleMessage(yjs.authentication(token));
    for (const message of waiting.splice(0)) connection.handleMessage(message);
  }

  /** Ends the sockets still open (Hocuspocus has closed their documents by now). */
  async close(): Promise<void> {
    for (const websocket of this.#sockets.clients) websocket.terminate();
    await new Promise<void>((resolve) => this.#sockets.close(() => resolve()));
  }
}
