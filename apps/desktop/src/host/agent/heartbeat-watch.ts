import { type RouteResponse, type Routes, TandemApiError, type TandemClient } from "@tandem/core";
import type { HeartbeatDelivery } from "../../shared/desktop-api";
import { PendingCount } from "../bridge/pending-count";
import type { HostContext } from "../host-context";

/** Heartbeats run minutes apart at the least; a run asked for here, or a message read, refreshes at once. */
const POLL_INTERVAL_MS = 30_000;
const PREVIEW_LENGTH = 200;

/**
 * The agent's unread messages and the heartbeat messages delivered while the app runs, kept by
 * polling the server (`GET /conversations` for the unread total, `GET /heartbeat/status` for the
 * last run). Emits `heartbeat-message` (a {@link HeartbeatDelivery}) once per new delivered run:
 * Electron's main shows a notification, and the renderer a toast through the host's status. What
 * was delivered before the app started (or before sign-in) is only counted, never announced.
 */
export class HeartbeatWatch extends PendingCount {
  /** The last delivered run seen; undefined until the first answer for this session. */
  #lastSeen: number | null | undefined;
  #latest: HeartbeatDelivery | null = null;
  /** The heartbeat thread, once the server named one. */
  #thread: number | null = null;
  /** Moves on each sign-in and sign-out: an answer for the account before is dropped. */
  #generation = 0;
  readonly #unsubscribe: () => void;

  constructor(
    private readonly context: HostContext,
    private readonly onChange: () => void,
  ) {
    super(POLL_INTERVAL_MS, onChange);
    // Another account starts from its own runs: nothing of the last one is announced or counted.
    this.#unsubscribe = context.session.onChange(() => {
      this.#generation += 1;
      this.#lastSeen = undefined;
      this.#latest = null;
      this.#thread = null;
      void this.refresh();
    });
  }

  latest(): HeartbeatDelivery | null {
    return this.#latest;
  }

  /** The conversation the heartbeat writes to, as of the last poll; null before its first message. */
  thread(): number | null {
    return this.#thread;
  }

  close(): void {
    this.#unsubscribe();
    this.stop();
  }

  protected async readCount(): Promise<number | undefined> {
    const client = this.context.session.client();
    if (!client) return 0;
    const generation = this.#generation;
    try {
      const [unread, status] = await Promise.all([unreadTotal(client), heartbeatStatus(client)]);
      if (generation !== this.#generation) return undefined;
      if (status) this.#follow(status);
      return unread;
    } catch {
      return undefined; // Offline: keep the last count; the next poll tries again.
    }
  }

  #follow(status: HeartbeatStatus): void {
    this.#thread = status.conversationId;
    const delivery = deliveryOf(status.lastRun);
    const seen = this.#lastSeen;
    this.#lastSeen = delivery?.runId ?? seen ?? null;
    if (seen === undefined || delivery === null || delivery.runId === seen) return;
    this.#latest = delivery;
    this.context.events.emit("heartbeat-message", delivery);
    this.onChange();
  }
}

async function unreadTotal(client: TandemClient): Promise<number> {
  const answer = await client.call("listConversations", { query: { view: "me", limit: 100, messages: 0 } });
  return answer.unreadTotal ?? (answer.conversations ?? []).reduce((sum, row) => sum + row.unreadCount, 0);
}

type HeartbeatStatus = RouteResponse<Routes["heartbeatStatus"]>["status"];

/** The heartbeat's status; null for a key without os.heartbeat:read, which still counts unread messages but hears of no runs. */
async function heartbeatStatus(client: TandemClient): Promise<HeartbeatStatus | null> {
  try {
    return (await client.call("heartbeatStatus")).status;
  } catch (error) {
    if (error instanceof TandemApiError && error.status === 403) return null;
    throw error;
  }
}

/** The last run's message, if it was delivered (a dry run, a suppressed or failed one was not). */
function deliveryOf(lastRun: HeartbeatStatus["lastRun"]): HeartbeatDelivery | null {
  if (!lastRun?.delivered || lastRun.conversationId === null || lastRun.messageId === null) return null;
  return {
    runId: lastRun.id,
    conversationId: lastRun.conversationId,
    messageId: lastRun.messageId,
    preview: lastRun.summary.slice(0, PREVIEW_LENGTH),
    deliveredAt: lastRun.completedAt ?? lastRun.startedAt,
  };
}
