import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { Hocuspocus } from "@hocuspocus/server";
import { type RawData, WebSocketServer } from "ws";
import type { AppContext } from "../context";

export const SYNC_PATH = "/sync";

/** What a sync connection carries once its token is verified. */
export interface SyncContext {
  userId: number;
}

// Hop-by-hop headers belong to this socket, not to the request Hocuspocus hooks see.
const HOP_BY_HOP = new Set([
  "host",
  "connection",
  "upgrade",
  "sec-websocket-key",
  "sec-websocket-extensions",
  "keep-alive",
  "transfer-encoding",
]);

function toFetchRequest(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers as IncomingHttpHeaders)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(new URL(request.url ?? "/", "http://localhost"), { headers });
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  return data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The sync hub: Hocuspocus on our own `ws` server, sharing the HTTP server's port at `/sync`.
 * A connection's token is a credential (API key now, device token later); which documents a
 * principal may open is decided per document name, and no document kind is open yet, so every
 * document is refused (fail closed) until the notes issue defines them.
 */
export class SyncServer {
  readonly hocuspocus: Hocuspocus<SyncContext>;
  readonly #sockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });

  constructor(private readonly context: AppContext) {
    this.hocuspocus = new Hocuspocus<SyncContext>({
      name: "tandem",
      quiet: true,
      onAuthenticate: async ({ token, documentName }) => {
        const principal = await this.context.authenticator.verify(token);
        if (!principal) throw new Error("invalid credential");
        this.authorize(principal.userId, documentName);
        return { userId: principal.userId } satisfies SyncContext;
      },
    });
  }

  /** Throws unless the user may open the document. */
  authorize(_userId: number, documentName: string): void {
    throw new Error(`no such document: ${documentName}`);
  }

  /** Takes over an HTTP upgrade aimed at the sync path. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#sockets.handleUpgrade(request, socket, head, (websocket) => {
      const connection = this.hocuspocus.handleConnection(websocket, toFetchRequest(request));
      websocket.on("message", (data) => connection.handleMessage(toBytes(data)));
      websocket.on("close", (code, reason) => connection.handleClose({ code, reason: reason.toString() }));
      websocket.on("error", (error) => this.context.logger.debug({ err: error }, "sync socket error"));
    });
  }

  /** Closes every connection and stores every document before answering. */
  async close(): Promise<void> {
    this.hocuspocus.flushPendingStores();
    if (this.hocuspocus.getDocumentsCount() > 0) {
      await new Promise<void>((resolve) => {
        this.hocuspocus.configuration.extensions.push({
          afterUnloadDocument: async ({ instance }) => {
            if (instance.getDocumentsCount() === 0) resolve();
          },
        });
        this.hocuspocus.closeConnections();
      });
    }
    for (const websocket of this.#sockets.clients) websocket.terminate();
    await new Promise<void>((resolve) => this.#sockets.close(() => resolve()));
  }
}
