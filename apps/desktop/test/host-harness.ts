import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { HocuspocusProvider, HocuspocusProviderWebsocket } from "@hocuspocus/provider";
import { loadConfig, type RunningServer, startServer } from "@tandem/server";
import type { TestServer, TestUser } from "@tandem/server/testing";
import WebSocket from "ws";
import type * as Y from "yjs";
import { type Host, type HostConfig, startHost } from "../src/host/host";
import type { SessionService } from "../src/host/host-context";
import { FileSecretStore } from "../src/host/session/file-secret-store";
import { serverClient } from "../src/host/session/server-client";
import type { LocalSyncInfo } from "../src/shared/desktop-api";

/** Helpers for host tests: a host on a temporary data directory, documents opened like the renderer opens them. */

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix));
}

/** A host in web mode on `dataDir` (kept across restarts of the host); `config` adds to it (a fake `bridge`, say). */
export function startTestHost(dataDir: string, config: Partial<Omit<HostConfig, "dataDir">> = {}): Promise<Host> {
  return startHost({ mode: "web", version: "0.0.0-test", dataDir, secrets: new FileSecretStore(dataDir), ...config });
}

/** Signs the host in to the test server as `user`, with their key (as the sign-in screen does). */
export async function signInAs(host: Host, ts: TestServer, user: TestUser): Promise<void> {
  await host.api.signInWithApiKey({ serverUrl: ts.server.url, apiKey: user.apiKey });
}

/**
 * A signed-in session for testing one facet against the real server without a whole host: `user`'s key
 * at `serverUrl` (a prefix such as `/older` makes the server answer 404 route_not_found, like an older one).
 */
export function sessionOf(user: TestUser, serverUrl: string): SessionService {
  return {
    credentials: () => ({ serverUrl, apiKey: user.apiKey, userId: user.userId }),
    client: () => serverClient(serverUrl, user.apiKey),
  } as unknown as SessionService;
}

/** Polls `check` until it answers something truthy; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The renderer's side of the local hub, in Node: one socket, a provider per document. */
export class HubClient {
  readonly #websocket: HocuspocusProviderWebsocket;
  readonly #providers = new Map<string, HocuspocusProvider>();

  constructor(readonly sync: LocalSyncInfo) {
    this.#websocket = new HocuspocusProviderWebsocket({ url: sync.url, WebSocketPolyfill: WebSocket });
  }

  /** Opens a document and waits for its first sync with the hub. */
  async open(name: string, token = this.sync.token): Promise<Y.Doc> {
    const existing = this.#providers.get(name);
    if (existing) return existing.document;
    const provider = new HocuspocusProvider({ websocketProvider: this.#websocket, name, token });
    this.#providers.set(name, provider);
    provider.attach();
    await new Promise<void>((resolve, reject) => {
      provider.on("synced", () => resolve());
      provider.on("authenticationFailed", ({ reason }: { reason: string }) => reject(new Error(`the hub refused ${name}: ${reason}`)));
    });
    return provider.document;
  }

  /** Whether every change made here has reached the hub. */
  settled(): boolean {
    return [...this.#providers.values()].every((provider) => provider.isSynced && provider.unsyncedChanges === 0);
  }

  close(): void {
    for (const provider of this.#providers.values()) provider.destroy();
    this.#websocket.destroy();
  }
}

/**
 * A real server on a fixed port, for restarting "the same server" after a test stopped it (the
 * test harness's `restart` picks a new port, and the desktop keeps its documents per server URL).
 */
export async function startServerAt(port: number, dataDir: string): Promise<RunningServer> {
  return startServer(loadConfig({ port, dataDir, logLevel: "silent" }, {}));
}
