import { DocumentChangesPosition, todosDocName, workspaceDocName } from "@tandem/core";
import type { LocalSyncInfo, SessionInfo, SyncStatus } from "../../shared/desktop-api";
import type { SyncFacet } from "../facets";
import type { HostContext, SyncService } from "../host-context";
import { serverClient } from "../session/server-client";
import { syncUrlOf } from "../session/server-url";
import { LocalDocumentStore } from "../store/document-store";
import { explainRefusal } from "./explain-refusal";
import { LocalHub } from "./local-hub";
import { Replicator } from "./replicator";
import type { SyncOptions } from "./sync-options";
import { syncStatusOf } from "./sync-status";
import { type OutlinePart, WorkspaceOutlineKeeper } from "./workspace-outline";

export interface SyncHandle extends SyncService {
  readonly facet: SyncFacet;
  /** Documents open in the local hub now (tests and benchmarks: memory follows this). */
  openDocuments(): number;
  close(): Promise<void>;
}

/**
 * When the host starts with a saved session, replication holds back until the renderer opens the
 * workspace document (the notes view does once its first view is on screen), or at most this long:
 * starting loads the workspace (for 20,000 notes, a second of the host's thread) and connects to
 * the server, and the first view (the outline, the first note opened) should have the machine to
 * itself. Nothing typed meanwhile waits for the server. A sign-in starts at once.
 */
const COLD_START_CONNECT_DELAY_MS = 10_000;

/** How long status changes gather before one `status` event goes out. */
const STATUS_EVENT_DELAY_MS = 100;

/** A saved change-feed position; anything unreadable starts the feed from the beginning. */
function parseChangesPosition(saved: string | null): DocumentChangesPosition | null {
  if (saved === null) return null;
  try {
    return DocumentChangesPosition.parse(JSON.parse(saved));
  } catch {
    return null;
  }
}

/** Whose local documents these are: see LocalDocumentsTable.account. */
export function accountKey(serverUrl: string, userId: number): string {
  return `${serverUrl}#${userId}`;
}

interface Running {
  readonly account: string;
  readonly userId: number;
  readonly hub: LocalHub;
  readonly replicator: Replicator;
  readonly outline: WorkspaceOutlineKeeper;
  /** Cancels a replication start still waiting (a cold start's). */
  readonly stopTimer: () => void;
}

/**
 * Local-first sync for the signed-in user: the local hub the renderer edits through, and
 * replication of every document with the server. Both follow the session: signing in starts
 * them for that account, signing out stops them (the local documents stay on disk).
 */
export async function startSync(context: HostContext, options: SyncOptions = {}): Promise<SyncHandle> {
  let running: Running | undefined;
  let closed = false;
  // Session changes apply one after another; readers wait for the one in progress.
  let transition: Promise<void> = Promise.resolve();
  let statusTimer: ReturnType<typeof setTimeout> | undefined;
  let lastStatus = "";

  const status = (): SyncStatus => syncStatusOf(running ? running.replicator.progress() : null);

  const statusMayHaveChanged = () => {
    if (statusTimer || closed) return;
    statusTimer = setTimeout(() => {
      statusTimer = undefined;
      const now = JSON.stringify(status());
      if (now === lastStatus) return;
      lastStatus = now;
      context.events.emit("status");
    }, STATUS_EVENT_DELAY_MS);
  };

  const stop = async () => {
    const stopping = running;
    running = undefined;
    if (!stopping) return;
    stopping.stopTimer();
    await stopping.replicator.stop();
    await stopping.hub.close();
    await stopping.outline.flush();
  };

  const start = async (coldStart: boolean) => {
    const credentials = context.session.credentials();
    if (!credentials || closed) return;
    const account = accountKey(credentials.serverUrl, credentials.userId);
    if (running?.account === account) return;
    await stop();
    const { userId, serverUrl, apiKey } = credentials;
    let replicator: Replicator | undefined;
    let startTimer: ReturnType<typeof setTimeout> | undefined;
    let replicating = false;
    /** Starts replication (once): loads the workspace in the hub and connects to the server. */
    const begin = () => {
      if (replicating || !replicator) return;
      replicating = true;
      clearTimeout(startTimer);
      void startReplication(replicator).catch((error: unknown) => {
        console.error("Tandem: replication could not start:", error instanceof Error ? error.message : error);
      });
    };
    const workspaceName = workspaceDocName(userId);
    const outlineKey = (part: OutlinePart) => (part === "whole" ? `workspace.outline:${account}` : `workspace.outline.first:${account}`);
    const outline = new WorkspaceOutlineKeeper({
      get: (part) => context.store.getSetting(outlineKey(part)),
      set: (part, value) => context.store.setSetting(outlineKey(part), value),
    });
    const hub = await LocalHub.start({
      userId,
      store: new LocalDocumentStore(context.store.db, account),
      beforeLoad: options.beforeLoad,
      onUnsyncedChange: statusMayHaveChanged,
      onDocumentUse: (name, inUse) => {
        if (inUse && name === workspaceName) begin();
        if (inUse) replicator?.useDocument(name);
        else replicator?.releaseDocument(name);
      },
      onStored: (name, doc) => {
        if (name === workspaceName) outline.schedule(doc);
      },
    });
    const cursorKey = `replication.cursor:${account}`;
    replicator = new Replicator({
      hub,
      syncUrl: syncUrlOf(credentials.serverUrl),
      apiKey: credentials.apiKey,
      userId,
      onChange: statusMayHaveChanged,
      explainRefusal: (name) => explainRefusal(serverUrl, apiKey, name),
      fetchChanges: async (from) => serverClient(serverUrl, apiKey).call("documentChanges", { query: from ?? {} }),
      ...(options.pull === false
        ? {}
        : { pullDocuments: async (documents) => serverClient(serverUrl, apiKey).call("pullDocuments", { body: { documents } }) }),
      cursor: {
        load: async () => parseChangesPosition(await context.store.getSetting(cursorKey)),
        save: (position) => context.store.setSetting(cursorKey, JSON.stringify(position)),
      },
      ...options,
    });
    const startReplication = async (replicator: Replicator) => {
      await replicator.start();
      // A workspace without an outline yet (this version's first start): one is written from the loaded document.
      const workspace = hub.hocuspocus.documents.get(workspaceName);
      if (workspace && !(await outline.exists())) outline.schedule(workspace);
    };
    // At a cold start, once the renderer opens the workspace or after the delay (see COLD_START_CONNECT_DELAY_MS).
    const replicationDelayMs = coldStart ? (options.coldStartConnectDelayMs ?? COLD_START_CONNECT_DELAY_MS) : 0;
    running = { account, userId, hub, replicator, outline, stopTimer: () => clearTimeout(startTimer) };
    if (replicationDelayMs === 0 || hub.isOpen(workspaceName)) begin();
    else {
      startTimer = setTimeout(begin, replicationDelayMs);
      startTimer.unref();
    }
  };

  const follow = (info: SessionInfo, coldStart = false): Promise<void> => {
    // A failed start is reported to whoever caused it (sign-in) and does not block the next change.
    const next = transition.catch(() => {}).then(() => (info.state === "signed_in" ? start(coldStart) : stop()));
    transition = next.finally(statusMayHaveChanged);
    return next;
  };

  const unsubscribe = context.session.onChange((info) => follow(info));
  // A session restored at start: the host's cold start.
  await follow(context.session.info(), true);

  const signedIn = async (): Promise<Running> => {
    await transition;
    if (!running) throw new Error("Sign in first");
    return running;
  };

  return {
    status,
    unsyncedDocuments: () => running?.replicator.progress().unsynced ?? 0,
    openDocuments: () => running?.hub.hocuspocus.getDocumentsCount() ?? 0,
    async readDocument(name, read) {
      const { hub } = await signedIn();
      if (!hub.servesDocument(name)) throw new Error(`${name} is not one of the signed-in user's documents`);
      return hub.readDocument(name, read);
    },
    async readDocuments(names, read) {
      const { hub } = await signedIn();
      const refused = names.find((name) => !hub.servesDocument(name));
      if (refused) throw new Error(`${refused} is not one of the signed-in user's documents`);
      return hub.readDocuments(names, read);
    },
    facet: {
      // Signed out: none (the renderer asks as it starts, before it knows who is signed in).
      getWorkspaceOutline: async (input) => {
        await transition.catch(() => {});
        // Arguments arrive as untrusted JSON: anything but the first screen asked for plainly is the whole outline.
        const part = typeof input === "object" && input !== null && input.firstScreen === true ? "first_screen" : "whole";
        return running ? running.outline.read(part) : null;
      },
      getLocalSync: async (): Promise<LocalSyncInfo> => {
        const { hub, userId } = await signedIn();
        return { url: hub.url, token: hub.token, userId, workspaceDoc: workspaceDocName(userId), todosDoc: todosDocName(userId) };
      },
    },
    async close() {
      closed = true;
      unsubscribe();
      clearTimeout(statusTimer);
      await transition;
      await stop();
    },
  };
}
