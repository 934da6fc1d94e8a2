import { EventEmitter } from "node:events";
import type { AppInfo, DesktopApi, HostStatus } from "../shared/desktop-api";
import { startAgent } from "./agent/agent";
import { type BridgeHandle, startBridge } from "./bridge/bridge";
import type { HostConfig, HostContext } from "./host-context";
import { type SyncHandle, startSync } from "./replication/sync";
import { startSession } from "./session/session";
import { openLocalStore } from "./store/local-store";
import { createWorkspaceFacet } from "./workspace/workspace";

export type { HostConfig } from "./host-context";

/** The running host: the API for the renderer, events for Electron's main process. */
export interface Host {
  readonly api: DesktopApi;
  readonly context: HostContext;
  /** Documents with changes the server has not confirmed; main warns before quitting with any. */
  unsyncedDocuments(): number;
  /** Documents open in the local hub now: what replication keeps in memory (tests, benchmarks). */
  openDocuments(): number;
  status(): Promise<HostStatus>;
  close(): Promise<void>;
}

/**
 * The app's local back end. It is plain Node (never `electron`), so Electron's main process and
 * web mode run the very same code, and tests exercise it without Electron.
 */
export async function startHost(config: HostConfig): Promise<Host> {
  const appInfo: AppInfo = Object.freeze({ name: "Tandem", version: config.version, mode: config.mode });
  const store = await openLocalStore(config.dataDir);
  const events = new EventEmitter();
  const session = await startSession(config, store);
  const context: HostContext = { config, store, session, events };
  let sync: SyncHandle | undefined;
  let bridge: BridgeHandle | undefined;
  try {
    sync = await startSync(context, config.replication);
    bridge = await startBridge(context);
  } catch (error) {
    await bridge?.close();
    await sync?.close();
    await store.close();
    throw error;
  }
  const agent = startAgent(context);
  const running = { sync, bridge };

  const status = async (): Promise<HostStatus> => ({
    sync: running.sync.status(),
    bridge: running.bridge.status(),
    approvalsPending: running.bridge.pendingApprovals(),
    requestsPending: running.bridge.pendingRequests(),
  });

  const api: DesktopApi = {
    getAppInfo: async () => appInfo,
    ...session.facet,
    ...running.sync.facet,
    getStatus: status,
    ...createWorkspaceFacet(context, running.sync),
    ...running.bridge.facet,
    ...agent.facet,
    openExternal: async ({ url }) => {
      if (!config.openExternal || !/^https?:\/\//.test(url)) return { opened: false };
      await config.openExternal(url);
      return { opened: true };
    },
  };

  return {
    api,
    context,
    unsyncedDocuments: () => running.sync.unsyncedDocuments(),
    openDocuments: () => running.sync.openDocuments(),
    status,
    async close() {
      agent.close();
      await running.bridge.close();
      await running.sync.close();
      await session.close();
      await store.close();
    },
  };
}
