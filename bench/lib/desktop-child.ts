/**
 * Child process for `desktop`: a desktop host in web mode (`startHost`, the same code Electron's
 * main process runs), optionally with the web server serving a renderer build, in a fresh
 * process; and the baseline of the first replication (plain providers fetching the same
 * documents, nothing stored). The modules are imported before the parent's first call, so a
 * cold start measured from `start` counts the host's work, not Node loading TypeScript.
 */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import WebSocket from "ws";
import * as Y from "yjs";
import { type Host, startHost } from "../../apps/desktop/src/host/host";
import { FileSecretStore } from "../../apps/desktop/src/host/session/file-secret-store";
import { openLocalStore } from "../../apps/desktop/src/host/store/local-store";
import type { SyncStatus } from "../../apps/desktop/src/shared/desktop-api";
import { type RunningWebServer, startWebServer } from "../../apps/desktop/src/web/web-server";
import { serveParent } from "./child";

export interface StartRequest {
  readonly dataDir: string;
  /** Serve this renderer build with the web server, as web mode does; none: the host alone. */
  readonly rendererDir?: string;
}

export interface StartAnswer {
  /** The web server's address, when one was started. */
  readonly url: string | null;
  /** `startHost` answered, ms after `start` was called. */
  readonly hostMs: number;
  /** The web server listens, ms after `start` was called. */
  readonly webMs: number;
}

export interface SyncedAnswer {
  /** ms after `start` was called. */
  readonly atMs: number;
  readonly status: SyncStatus;
}

export interface RawFetchRequest {
  readonly syncUrl: string;
  readonly token: string;
  readonly names: readonly string[];
  /** Documents attached and not yet synced at once (the server resets a socket with more than 100 authenticating). */
  readonly inFlight: number;
  readonly timeoutMs: number;
}

export interface RawFetchAnswer {
  readonly synced: number;
  readonly refused: number;
  readonly ms: number;
  /** Of which this process's main thread was busy. */
  readonly busyMs: number;
  /** Sum of the fetched documents' states. */
  readonly bytes: number;
}

let host: Host | undefined;
let web: RunningWebServer | undefined;
let started = 0;
let startedLoop = performance.eventLoopUtilization();
const since = () => performance.now() - started;

async function start({ dataDir, rendererDir }: StartRequest): Promise<StartAnswer> {
  started = performance.now();
  startedLoop = performance.eventLoopUtilization();
  host = await startHost({ mode: "web", version: "0.0.0-bench", dataDir, secrets: new FileSecretStore(dataDir) });
  const hostMs = since();
  if (rendererDir !== undefined) web = await startWebServer(host.api, { rendererDir });
  return { url: web?.url ?? null, hostMs, webMs: since() };
}

function running(): Host {
  if (!host) throw new Error("start the host first");
  return host;
}

/** Polls the host's sync status until it is `synced` with `documents` replicated. */
async function waitSynced({ documents, timeoutMs }: { documents: number; timeoutMs: number }): Promise<SyncedAnswer> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { sync } = await running().status();
    if (sync.state === "synced" && sync.documents === documents) return { atMs: since(), status: sync };
    if (performance.now() > deadline) throw new Error(`not synced after ${timeoutMs} ms: ${JSON.stringify(sync)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Stops the web server and the host (which stores every open document first); answers how long that took. */
async function close(): Promise<number> {
  const closing = performance.now();
  await web?.close();
  await host?.close();
  web = undefined;
  host = undefined;
  return performance.now() - closing;
}

/** Rows in the local store's documents table (the host must be closed: it holds the file exclusively). */
async function storedDocuments(dataDir: string): Promise<number> {
  const store = await openLocalStore(dataDir);
  try {
    const row = await store.db
      .selectFrom("documents")
      .select((eb) => eb.fn.countAll<number>().as("count"))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  } finally {
    await store.close();
  }
}

/** The baseline: one socket, a plain provider per document, `inFlight` at a time, into fresh Y.Docs that are then dropped. */
async function rawFetch(request: RawFetchRequest): Promise<RawFetchAnswer> {
  const socket = new HocuspocusProviderWebsocket({ url: request.syncUrl, WebSocketPolyfill: WebSocket });
  // Providers not yet answered: each is destroyed once answered (its CLOSE lets the server unload the document), as
  // the host closes what it is through with. Keeping all of them attached would make each further one slower (every
  // provider listens on the shared socket) and hold every document open on the server.
  const providers = new Set<HocuspocusProvider>();
  const queue = [...request.names];
  let synced = 0;
  let refused = 0;
  let bytes = 0;
  const startedAt = performance.now();
  const loop = performance.eventLoopUtilization();
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`after ${request.timeoutMs} ms, ${synced} of ${request.names.length} documents had synced`)),
        request.timeoutMs,
      );
      const next = () => {
        if (synced + refused === request.names.length) {
          clearTimeout(timer);
          resolve();
          return;
        }
        const name = queue.shift();
        if (name === undefined) return;
        let answered = false;
        const provider = new HocuspocusProvider({
          websocketProvider: socket,
          name,
          document: new Y.Doc(),
          token: request.token,
          awareness: null,
          onSynced: () => {
            if (answered) return;
            answered = true;
            synced++;
            bytes += Y.encodeStateAsUpdate(provider.document).byteLength;
            providers.delete(provider);
            queueMicrotask(() => provider.destroy());
            next();
          },
          onAuthenticationFailed: () => {
            if (answered) return;
            answered = true;
            refused++;
            providers.delete(provider);
            queueMicrotask(() => provider.destroy());
            next();
          },
        });
        providers.add(provider);
        provider.attach();
      };
      for (let i = 0; i < request.inFlight; i++) next();
    });
    return { synced, refused, ms: performance.now() - startedAt, busyMs: performance.eventLoopUtilization(loop).active, bytes };
  } finally {
    for (const provider of providers) provider.destroy();
    socket.destroy();
  }
}

export interface MemoryAnswer {
  /** This process's resident set, bytes. */
  readonly rss: number;
  /** Of which V8's heap in use, and memory outside it (Buffers, ArrayBuffers), bytes. */
  readonly heapUsed: number;
  readonly external: number;
  /** Documents open in the host's local hub. */
  readonly openDocuments: number;
}

export interface BusyAnswer {
  /** ms after `start` was called. */
  readonly atMs: number;
  /** Of which the main thread was busy (not waiting for I/O or timers). */
  readonly busyMs: number;
}

serveParent(
  {
    ready: async () => true,
    busy: async () => ({ atMs: since(), busyMs: performance.eventLoopUtilization(startedLoop).active }) satisfies BusyAnswer,
    start: (input) => start(input as StartRequest),
    signIn: async (input) => {
      const at = since();
      await running().api.signInWithApiKey(input as { serverUrl: string; apiKey: string });
      return { calledAtMs: at, answeredAtMs: since() };
    },
    waitSynced: (input) => waitSynced(input as { documents: number; timeoutMs: number }),
    memory: async () => {
      const { rss, heapUsed, external } = process.memoryUsage();
      return { rss, heapUsed, external, openDocuments: running().openDocuments() } satisfies MemoryAnswer;
    },
    close,
    storedDocuments: (input) => storedDocuments(input as string),
    rawFetch: (input) => rawFetch(input as RawFetchRequest),
  },
  async () => {
    await close();
  },
);
