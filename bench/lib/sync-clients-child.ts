/**
 * Child process holding many sync clients (Node `HocuspocusProvider`s sharing a few
 * `HocuspocusProviderWebsocket` connections). It lives apart from the benchmark so that the
 * clients' own Y.Docs and sockets do not count towards the server process's memory.
 */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import WebSocket from "ws";
import { serveParent } from "./child";

export interface OpenDocsRequest {
  /** `ws://host:port/sync` */
  readonly url: string;
  readonly token: string;
  /** Documents to open, all at once. */
  readonly names: readonly string[];
  /** Documents per WebSocket connection; the last connection takes the remainder. */
  readonly docsPerSocket: number;
  /** Gives up (and says how far it got) after this long. */
  readonly timeoutMs: number;
}

export interface OpenDocsAnswer {
  readonly sockets: number;
  readonly synced: number;
  readonly refused: number;
  /** From creating the first provider to the last one's first sync. */
  readonly ms: number;
  /** This child's RSS after opening, for scale: clients hold a copy of every document too. */
  readonly childRss: number;
}

const sockets: HocuspocusProviderWebsocket[] = [];
const providers: HocuspocusProvider[] = [];

function closeAll(): void {
  for (const provider of providers.splice(0)) provider.destroy();
  for (const socket of sockets.splice(0)) socket.destroy();
}

async function openDocs(request: OpenDocsRequest): Promise<OpenDocsAnswer> {
  const started = performance.now();
  let synced = 0;
  let refused = 0;
  let socketCount = 0;
  const outcomes: Promise<void>[] = [];
  let socket: HocuspocusProviderWebsocket | undefined;
  request.names.forEach((name, index) => {
    if (!socket || index % request.docsPerSocket === 0) {
      socket = new HocuspocusProviderWebsocket({ url: request.url, WebSocketPolyfill: WebSocket as never });
      sockets.push(socket);
      socketCount++;
    }
    const websocketProvider = socket;
    outcomes.push(
      new Promise<void>((resolve) => {
        const provider = new HocuspocusProvider({
          websocketProvider,
          name,
          token: request.token,
          onSynced: () => {
            synced++;
            resolve();
          },
          onAuthenticationFailed: () => {
            refused++;
            resolve();
          },
        });
        providers.push(provider);
        // A provider given an explicit websocketProvider only starts once attached.
        provider.attach();
      }),
    );
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), request.timeoutMs);
  });
  const outcome = await Promise.race([Promise.all(outcomes), timedOut]);
  clearTimeout(timer);
  if (outcome === "timeout") {
    throw new Error(`after ${request.timeoutMs} ms, ${synced} of ${request.names.length} documents had synced and ${refused} were refused`);
  }
  return { sockets: socketCount, synced, refused, ms: performance.now() - started, childRss: process.memoryUsage().rss };
}

serveParent(
  {
    open: (input) => openDocs(input as OpenDocsRequest),
    close: async () => {
      closeAll();
    },
  },
  async () => closeAll(),
);
