/**
 * Sync servers and clients for the sync benchmark, besides Tandem itself: stock Hocuspocus on a
 * `ws` server wired the way Tandem's sync-server.ts wires it (so the two differ only in what
 * Tandem adds: authentication, storage, views), and a raw `ws` relay that forwards each binary
 * message to the other clients (the transport's floor). Clients: a Node HocuspocusProvider on its
 * own connection, a y-websocket WebsocketProvider (for Tandem's `/yjs`), and a bare `ws` client that
 * sends and applies raw Yjs updates.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import { Hocuspocus } from "@hocuspocus/server";
import { NOTE_FRAGMENT } from "@tandem/core";
import WebSocket, { type RawData, WebSocketServer } from "ws";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";

export interface SyncServerHandle {
  /** `ws://127.0.0.1:port/…` */
  readonly url: string;
  close(): Promise<void>;
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  return data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function toRequest(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  return new Request(new URL(request.url ?? "/", "http://localhost"), { headers });
}

/** An HTTP server on a free loopback port whose upgrades go to `wss`. */
async function listenForUpgrades(wss: WebSocketServer, path: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(404).end();
  });
  server.on("upgrade", (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (websocket) => wss.emit("connection", websocket, request));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}${path}`,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Stock Hocuspocus: no extensions, no hooks, documents in memory only. */
export async function startStockHocuspocus(): Promise<SyncServerHandle & { readonly hocuspocus: Hocuspocus }> {
  const hocuspocus = new Hocuspocus({ quiet: true });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  wss.on("connection", (websocket: WebSocket, request: IncomingMessage) => {
    const connection = hocuspocus.handleConnection(websocket, toRequest(request));
    websocket.on("message", (data) => connection.handleMessage(toBytes(data)));
    websocket.on("close", (code, reason) => connection.handleClose({ code, reason: reason.toString() }));
  });
  const http = await listenForUpgrades(wss, "/sync");
  return {
    hocuspocus,
    url: http.url,
    close: async () => {
      hocuspocus.closeConnections();
      await http.close();
    },
  };
}

/** A relay: every binary message from one client goes to every other client, untouched. */
export async function startRawRelay(): Promise<SyncServerHandle> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  wss.on("connection", (websocket: WebSocket) => {
    websocket.on("message", (data, isBinary) => {
      for (const other of wss.clients) {
        if (other !== websocket && other.readyState === WebSocket.OPEN) other.send(data, { binary: isBinary });
      }
    });
  });
  return listenForUpgrades(wss, "/relay");
}

export interface SyncClient {
  readonly doc: Y.Doc;
  close(): void;
}

/** A HocuspocusProvider on a connection of its own, resolved once the document has synced. */
export async function connectProvider(
  url: string,
  name: string,
  token: string,
  doc = new Y.Doc(),
  timeoutMs = 30_000,
): Promise<SyncClient> {
  const socket = new HocuspocusProviderWebsocket({ url, WebSocketPolyfill: WebSocket as never });
  let provider: HocuspocusProvider | undefined;
  const close = () => {
    provider?.destroy();
    socket.destroy();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} did not sync within ${timeoutMs} ms`)), timeoutMs);
      provider = new HocuspocusProvider({
        websocketProvider: socket,
        name,
        document: doc,
        token,
        onSynced: () => {
          clearTimeout(timer);
          resolve();
        },
        onAuthenticationFailed: ({ reason }) => {
          clearTimeout(timer);
          reject(new Error(`${name} refused: ${reason}`));
        },
      });
      provider.attach();
    });
  } catch (error) {
    close();
    throw error;
  }
  return { doc, close };
}

/** A y-websocket WebsocketProvider (`serverUrl` like `ws://host:port/yjs`), resolved once the document has synced. */
export async function connectYWebsocket(serverUrl: string, name: string, token: string, timeoutMs = 30_000): Promise<SyncClient> {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(serverUrl, name, doc, {
    WebSocketPolyfill: WebSocket as never,
    params: { token },
    // Providers of one room in one process would otherwise sync through BroadcastChannel, not the server.
    disableBc: true,
  });
  const close = () => provider.destroy();
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} did not sync within ${timeoutMs} ms`)), timeoutMs);
      provider.once("sync", () => {
        clearTimeout(timer);
        resolve();
      });
      provider.once("closed", ({ code, reason }) => {
        clearTimeout(timer);
        reject(new Error(`${name} refused: ${code} ${reason}`));
      });
    });
  } catch (error) {
    close();
    throw error;
  }
  return { doc, close };
}

/** Marks updates applied from the relay, so they are not sent back. */
const FROM_RELAY = Symbol("from relay");

/** A bare client of the raw relay: sends each local Yjs update as one binary message, applies what arrives. */
export async function connectRawClient(url: string, doc = new Y.Doc()): Promise<SyncClient> {
  const websocket = new WebSocket(url);
  websocket.binaryType = "nodebuffer";
  await new Promise<void>((resolve, reject) => {
    websocket.once("open", () => resolve());
    websocket.once("error", reject);
  });
  websocket.on("message", (data) => Y.applyUpdate(doc, toBytes(data), FROM_RELAY));
  const onUpdate = (update: Uint8Array, origin: unknown) => {
    if (origin !== FROM_RELAY) websocket.send(update);
  };
  doc.on("update", onUpdate);
  return {
    doc,
    close: () => {
      doc.off("update", onUpdate);
      websocket.terminate();
    },
  };
}

/** The first text node of a note body, depth first: where the benchmarks "type". */
export function firstText(doc: Y.Doc): Y.XmlText | undefined {
  const stack: (Y.XmlElement | Y.XmlText | Y.XmlHook)[] = [...doc.getXmlFragment(NOTE_FRAGMENT).toArray()].reverse();
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node instanceof Y.XmlText) return node;
    if (node instanceof Y.XmlElement) stack.push(...[...node.toArray()].reverse());
  }
  return undefined;
}

export function sameBody(a: Y.Doc, b: Y.Doc): boolean {
  return a.getXmlFragment(NOTE_FRAGMENT).toString() === b.getXmlFragment(NOTE_FRAGMENT).toString();
}
