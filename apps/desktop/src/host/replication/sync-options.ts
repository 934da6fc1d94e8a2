import type { LocalHubOptions } from "./local-hub";
import type { ReplicatorOptions } from "./replicator";

// Apart from sync.ts because the host context names these options, and sync.ts needs the host context.

/** Options for tests; the app uses the defaults. */
export interface SyncOptions
  extends Pick<
    ReplicatorOptions,
    "maxAuthenticating" | "keepOpen" | "catchUpIntervalMs" | "catchUpOverlapMs" | "reconnectDelayMs" | "reconnectMaxDelayMs"
  > {
  /** See `COLD_START_CONNECT_DELAY_MS` in sync.ts. */
  readonly coldStartConnectDelayMs?: number;
  /** false: every note is exchanged over sync on its own, as against a server without `POST /sync/pull`. */
  readonly pull?: boolean;
  /** Tests: a slow host, see {@link LocalHubOptions.beforeLoad}. */
  readonly beforeLoad?: LocalHubOptions["beforeLoad"];
}
