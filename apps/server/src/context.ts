import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { ModelCatalog } from "./agent/models/model-catalog";
import type { Authenticator } from "./auth/authenticator";
import type { Clock } from "./clock";
import type { ServerConfig } from "./config";
import type { SecretBox } from "./crypto/secret-box";
import type { Database } from "./db/database";
import type { Schema } from "./db/schema";
import type { RealtimeLog } from "./delegation/realtime/event-log";
import type { Maintenance } from "./maintenance";
import type { SharedState } from "./shared/shared-state";
import type { SyncServer } from "./sync/sync-server";
import type { Embedder } from "./workspace/search/embedder";

/** What every feature's routes and services share; built once at start. */
export interface AppContext {
  readonly config: ServerConfig;
  readonly logger: Logger;
  readonly database: Database;
  readonly db: Kysely<Schema>;
  readonly authenticator: Authenticator;
  /** What every instance must agree on beyond the database: limits, run slots, access signals (docs/scaling.md). */
  readonly shared: SharedState;
  /** The sync hub; REST writes to notes, folders and todos go through it. */
  readonly sync: SyncServer;
  /** The delegation layer's time; tests move it forward. */
  readonly clock: Clock;
  /** The per-endpoint realtime event log and its live notifications. */
  readonly realtime: RealtimeLog;
  /** Periodic expiry sweeps; services register their tasks at start. */
  readonly maintenance: Maintenance;
  /** The models the agent may run, by alias (`default`, `fast`, `smart`, `local`). */
  readonly models: ModelCatalog;
  /** The configured embedding model (TANDEM_EMBEDDING_MODEL); without one, search ranks by words alone. */
  readonly embedder?: Embedder;
  /** Encrypts what must be stored but never in the clear (third-party tokens, signing keys). */
  readonly secrets: SecretBox;
}
