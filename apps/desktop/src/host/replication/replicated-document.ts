import type { HocuspocusProvider } from "@hocuspocus/provider";
import type { HubConnection } from "./local-hub";
import type { StoredExchange } from "./stored-exchange";

/**
 * Where one document stands with the server:
 * - `closed`: a note not open in the hub (its copy is on disk); up to date as far as this machine
 *   knows, unless it is queued for an exchange;
 * - `loading`: being opened in the local hub, its stored copy read for an exchange from it, or pulled;
 * - `waiting`: ready, not attached to the socket (offline, or waiting for a turn to authenticate);
 * - `authenticating`: attached, its token sent, no answer yet;
 * - `live`: accepted; syncing both ways;
 * - `refused`: the server said no; retried later.
 */
export type ReplicationState = "closed" | "loading" | "waiting" | "authenticating" | "live" | "refused";

/**
 * One document replicated with the server: while open, the hub's copy and the provider bound to
 * it; while a closed note is exchanged from its stored bytes, that exchange.
 */
export class ReplicatedDocument {
  #state: ReplicationState = "loading";
  connection: HubConnection | undefined;
  provider: HocuspocusProvider | undefined;
  exchange: StoredExchange | undefined;
  /** The hub's {@link LocalHub.localChangeMark} when the exchange read the stored copy. */
  localMark = 0;
  /** When (`performance.now()`) it was last attached to the socket (its sync step 1 sent); 0: never since the host started. */
  exchangeStartedAt = 0;
  /** A pull did not settle it (see note-pull.ts): its next exchange goes over sync. */
  exchangeOverSync = false;
  /** Refusals in a row, for the retry backoff, and what the latest one means (null once accepted). */
  refusals = 0;
  refusal: string | null = null;
  retryTimer: ReturnType<typeof setTimeout> | undefined;
  removed = false;

  /** `onClosed` hears when the document becomes closed (true) or leaves that state (false). */
  constructor(
    readonly name: string,
    private readonly onClosed?: (doc: ReplicatedDocument, closed: boolean) => void,
  ) {}

  get state(): ReplicationState {
    return this.#state;
  }

  set state(next: ReplicationState) {
    const wasClosed = this.#state === "closed";
    this.#state = next;
    if (wasClosed !== (next === "closed")) this.onClosed?.(this, !wasClosed);
  }

  /** Accepted, through the first exchange, and every change sent since confirmed by the server. */
  get upToDate(): boolean {
    const provider = this.provider;
    return this.state === "live" && provider !== undefined && provider.isSynced && provider.unsyncedChanges === 0;
  }
}
