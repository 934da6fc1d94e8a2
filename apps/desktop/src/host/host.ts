import { EventEmitter } from "node:events";
import { z } from "zod";
import type { AppInfo, DesktopApi, HostStatus } from "../shared/desktop-api";
import { startAgent } from "./agent/agent";
import { createManagedAgentMethods } from "./agents/managed-agents";
import { type BridgeHandle, startBridge } from "./bridge/bridge";
import { createConnectionsFacet } from "./connections/connections";
import { createDraftsFacet } from "./drafts/drafts";
import { OwnerEscalations } from "./escalations/owner-escalations";
import type { HostConfig, HostContext } from "./host-context";
import { createInboxFacet } from "./inbox/inbox";
import { InboxWatch } from "./inbox/inbox-watch";
import { parseInput } from "./parse-input";
import { RawMemoryCollector } from "./raw-memory/collector";
import { createRawMemoryFacet } from "./raw-memory/raw-memory";
import { type SyncHandle, startSync } from "./replication/sync";
import { startSession } from "./session/session";
import { createShareFacet } from "./share/share-links";
import { openLocalStore } from "./store/local-store";
import { createUsageFacet } from "./usage/usage";
import { createWorkspaceFacet } from "./workspace/workspace";

export type { HostConfig } from "./host-context";

const UnsavedWorkInput = z.object({ description: z.string().trim().min(1).max(500).nullable() });
const StatusInput = z.object({ fresh: z.boolean().optional() }).optional();
/**
 * How long `getStatus({fresh: true})` waits for the server's counts of what waits for the owner: the
 * page asks so as it starts, and its first frame waits at most 500 ms for its first answers.
 */
const FRESH_STATUS_MAX_WAIT_MS = 400;

/** The running host: the API for the renderer, events for Electron's main process. */
export interface Host {
  readonly api: DesktopApi;
  readonly context: HostContext;
  /** Documents with changes the server has not confirmed; main warns before quitting with any. */
  unsyncedDocuments(): number;
  /** What the page said it holds unsaved (`setUnsavedWork`), or null; main asks before quitting with any. */
  unsavedWork(): string | null;
  /** Documents open in the local hub now: what replication keeps in memory (tests, benchmarks). */
  openDocuments(): number;
  status(): Promise<HostStatus>;
  /** Raw memory's collector (tests run its timer's work at once). */
  readonly rawMemory: RawMemoryCollector;
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
  // The inbox's unread count and live arrivals (GET /agent/stream).
  const inbox = new InboxWatch(context, () => events.emit("status"));
  inbox.start();
  // What the owner's agents wait for (escalations): live from the same stream's events.
  const escalations = new OwnerEscalations(context, () => events.emit("status"));
  escalations.start();
  // Raw memory's collector: opt-in per account; idle (one slow timer) until turned on.
  const rawMemory = new RawMemoryCollector(context, config.rawMemory);
  rawMemory.start();
  const running = { sync, bridge };
  let unsavedWork: string | null = null;
  // The page's edits belong to the account that made them; they are gone once it signs out.
  session.onChange(() => {
    unsavedWork = null;
  });

  const status = async (): Promise<HostStatus> => ({
    sync: running.sync.status(),
    bridge: running.bridge.status(),
    approvalsPending: running.bridge.pendingApprovals(),
    escalationsPending: escalations.pendingCount(),
    requestsPending: running.bridge.pendingRequests(),
    agentUnread: agent.heartbeat.pendingCount(),
    heartbeatDelivery: agent.heartbeat.latest(),
    inboxUnread: inbox.pendingCount(),
    inboxArrival: inbox.latest(),
    inboxRequestsSeen: inbox.requestsSeen(),
  });

  const api: DesktopApi = {
    getAppInfo: async () => appInfo,
    ...session.facet,
    ...running.sync.facet,
    getStatus: async (input) => {
      if (parseInput("getStatus", StatusInput, input)?.fresh) {
        await Promise.all([
          running.bridge.refreshWaiting(FRESH_STATUS_MAX_WAIT_MS),
          waitAtMost(escalations.refresh(), FRESH_STATUS_MAX_WAIT_MS),
        ]);
      }
      return status();
    },
    ...createWorkspaceFacet(context, running.sync),
    ...running.bridge.facet,
    ...agent.facet,
    ...createConnectionsFacet(session),
    ...createInboxFacet(session, () => void inbox.refresh()),
    ...createShareFacet(session),
    ...createUsageFacet(session),
    ...createManagedAgentMethods(session),
    ...createDraftsFacet(context),
    listEscalations: () => escalations.list(),
    resolveEscalation: (input) => escalations.resolve(input),
    ...createRawMemoryFacet(rawMemory),
    setUnsavedWork: async (input) => {
      unsavedWork = parseInput("setUnsavedWork", UnsavedWorkInput, input).description;
    },
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
    unsavedWork: () => unsavedWork,
    openDocuments: () => running.sync.openDocuments(),
    status,
    rawMemory,
    async close() {
      agent.close();
      escalations.close();
      // All at once, the bridge first: it stops its runs as soon as quitting begins (a run's answer must not go out
      // after), whatever the inbox's stream or the raw memory collector's upload in flight take to end.
      await Promise.all([running.bridge.close(), inbox.close(), rawMemory.close()]);
      await running.sync.close();
      await session.close();
      await store.close();
    },
  };
}

/** `work`, or nothing once `ms` have passed: a first frame waits briefly, never on a slow server. */
function waitAtMost(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}
