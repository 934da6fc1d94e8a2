import type { EventEmitter } from "node:events";
import type { TandemClient } from "@tandem/core";
import type { Kysely } from "kysely";
import type * as Y from "yjs";
import type { AppMode, BridgeRuntime, SessionInfo, SyncStatus } from "../shared/desktop-api";
import type { RawMemoryOptions } from "./raw-memory/raw-memory-options";
import type { SyncOptions } from "./replication/sync-options";
import type { LocalSchema } from "./store/local-schema";

/** Keeps secrets (API key, device token) out of plain files: Electron's safeStorage, or a 0600 file in web mode. */
export interface SecretStore {
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
}

export interface HostConfig {
  readonly mode: AppMode;
  /** The desktop app's version: Electron's `app.getVersion()`, or the package's own version in web mode. */
  readonly version: string;
  /** Where the local database lives (Electron: `app.getPath("userData")`). */
  readonly dataDir: string;
  readonly secrets: SecretStore;
  /** Opens a link in the system browser; absent in web mode, where the page opens it. */
  readonly openExternal?: (url: string) => Promise<void>;
  /** The bridge's runtime adapters; tests use the fake one. */
  readonly bridge?: BridgeOptions;
  /** Replication's tuning (tests and benchmarks); the app uses the defaults. */
  readonly replication?: SyncOptions;
  /** Raw memory's session folders and timers (tests); the app uses the defaults. */
  readonly rawMemory?: RawMemoryOptions;
}

export interface BridgeOptions {
  /** Forces an adapter whatever was paired (tests: "fake"). */
  readonly adapter?: BridgeRuntime;
  /** Script for the fake runtime: tool calls it asks for, in order, per task. */
  readonly fakeToolCalls?: readonly FakeToolCall[];
  /** Tests: told what the fake runtime received (the wrapped prompt), decided and answered; a promise answered to `started` holds the run. */
  readonly onFakeRuntime?: (record: FakeRuntimeRecord) => unknown;
  /** Command lines of the real CLIs, if not on PATH. */
  readonly claudeCommand?: string;
  readonly codexCommand?: string;
  /** Heartbeat period in ms (default 20 s; the server drops an endpoint after 60 s without one). */
  readonly heartbeatMs?: number;
  /** How often guest messages are polled while answering guests is on, in ms (default 2 s). */
  readonly guestPollMs?: number;
}

export interface FakeToolCall {
  readonly toolName: string;
  readonly toolInputSummary: string;
}

/** What the fake runtime reports to a test, per task (`messageId`). */
export type FakeRuntimeRecord =
  | { readonly kind: "started"; readonly messageId: string; readonly prompt: string }
  | { readonly kind: "decision"; readonly messageId: string; readonly toolName: string; readonly decision: "allow" | "deny" }
  | { readonly kind: "finished"; readonly messageId: string; readonly result: string };

/** The local SQLite database (documents, settings, the bridge's cursor and spool). */
export interface LocalStore {
  readonly db: Kysely<LocalSchema>;
  getSetting(key: string): Promise<string | null>;
  setSetting(key: string, value: string | null): Promise<void>;
  close(): Promise<void>;
}

/** Who is signed in, and a client for the server's v1 API with their key. */
export interface SessionService {
  info(): SessionInfo;
  /** The server's base URL (`http://host:port`) and the user's key, or null when signed out. */
  credentials(): { serverUrl: string; apiKey: string; userId: number } | null;
  /** A typed v1 client with the user's key; null when signed out. */
  client(): TandemClient | null;
  /**
   * Called with the new session whenever it changes (sign-in, sign-out). Sign-in and sign-out wait
   * for a listener's promise: replication has started (or stopped) when they answer.
   */
  onChange(listener: (info: SessionInfo) => void | Promise<void>): () => void;
}

/** Replication's view for the rest of the host. */
export interface SyncService {
  status(): SyncStatus;
  /** Documents with changes not yet confirmed by the server (the quit warning uses this). */
  unsyncedDocuments(): number;
  /**
   * Reads one of the signed-in user's local documents (`workspace:<id>`, `todos:<id>`,
   * `note:<uuid>`): the live copy if it is open, else the stored one; works offline. `read` must
   * not change the document. Undefined when this machine has no copy; throws when signed out.
   */
  readDocument<T>(name: string, read: (doc: Y.Doc) => T): Promise<T | undefined>;
  /**
   * {@link readDocument} for many documents: the stored ones are read from disk together, a chunk at
   * a time with a turn of the event loop between chunks (hundreds read one query each would hold up
   * everything else the host serves). Answers by name; a document without a copy here is left out.
   */
  readDocuments<T>(names: readonly string[], read: (doc: Y.Doc, name: string) => T): Promise<Map<string, T>>;
}

/**
 * Events for Electron's main process (tray, notifications, quit warning):
 * - `status` (HostStatus) whenever sync, bridge, approvals or the unread messages change;
 * - `approval` (ApprovalItem) when a new tool call waits for the owner;
 * - `grant-request` (GrantItem) when someone asks for a grant;
 * - `heartbeat-message` (HeartbeatDelivery) when a heartbeat message reaches the owner's agent conversation;
 * - `inbox-message` (InboxArrival) when someone writes to the owner or one of their groups (the inbox);
 * - `user-event` (UserStreamEvent) for every event of the owner's user stream (`GET /agent/stream`).
 */
export type HostEvents = EventEmitter;

/** What every part of the host shares; built once by `startHost`. */
export interface HostContext {
  readonly config: HostConfig;
  readonly store: LocalStore;
  readonly session: SessionService;
  readonly events: HostEvents;
}
