import type { TandemClient } from "@tandem/core";
import { z } from "zod";
import type { InboxArrival } from "../../shared/desktop-api";
import { PendingCount } from "../bridge/pending-count";
import type { HostContext } from "../host-context";
import { previewOf, unreadOf } from "./inbox-read";
import { followUserStream, type UserStreamEvent } from "./user-stream";

/** Arrivals come over the stream; the count is also read now and then, for what was read on another device. */
const POLL_INTERVAL_MS = 30_000;
/** Finding where the stream stands reads the kept events in pages of this many (the server's largest). */
const EVENTS_PAGE = 500;
/**
 * Messages this close together make one notification, of the newest: a reconnect replays what came while
 * the server was out of reach all at once, and fifty notifications would say less than one.
 */
const ANNOUNCE_QUIET_MS = 1_000;

// A `message` event's data (docs/messaging.md): read leniently, and only what the notification needs.
const MessageEventData = z.object({
  conversationId: z.number().int(),
  conversationType: z.string().optional(),
  groupName: z.string().nullable().optional(),
  message: z.object({
    id: z.number().int(),
    senderLabel: z.string().optional().default(""),
    content: z.string(),
    createdAt: z.string().optional(),
  }),
});

/** A `message` event as the toast and the notification show it; null for anything else (unknown types are ignored). */
export function arrivalOf(event: UserStreamEvent): InboxArrival | null {
  if (event.type !== "message") return null;
  const parsed = MessageEventData.safeParse(event.data);
  if (!parsed.success) return null;
  const { conversationId, conversationType, groupName, message } = parsed.data;
  // The personal agent's own conversation is the Agent section's (and the heartbeat's notification).
  if (conversationType === "direct") return null;
  return {
    conversationId,
    messageId: message.id,
    kind: conversationType === "group" ? "group" : "person",
    from: message.senderLabel || "Someone",
    groupName: groupName ?? null,
    preview: previewOf(message.content),
    arrivedAt: message.createdAt ?? event.createdAt,
  };
}

/**
 * The inbox's unread count (the section's badge) and the messages arriving while the app runs. It
 * follows the user's realtime channel from where it stands at sign-in (what came before is only
 * counted, never announced). Each message from someone else becomes the newest arrival in the
 * host's status at once (the renderer's toast), and `inbox-message` (an {@link InboxArrival}) is
 * emitted for the newest of each burst (Electron's main shows a notification). The count is read
 * again on each arrival and every 30 s.
 */
export class InboxWatch extends PendingCount {
  #latest: InboxArrival | null = null;
  #requestsSeen = 0;
  #stream: { stop(): Promise<void> } | null = null;
  /** Moves on each sign-in and sign-out: work for the account before is dropped. */
  #generation = 0;
  #announce: NodeJS.Timeout | undefined;
  readonly #unsubscribe: () => void;

  constructor(
    private readonly context: HostContext,
    private readonly onChange: () => void,
  ) {
    super(POLL_INTERVAL_MS, onChange);
    this.#unsubscribe = context.session.onChange(() => {
      clearTimeout(this.#announce);
      this.#announce = undefined;
      this.#latest = null;
      void this.#follow();
      void this.refresh();
    });
  }

  latest(): InboxArrival | null {
    return this.#latest;
  }

  /** `message_request` events seen while the app ran: a request carries no text to announce, only that the list moved. */
  requestsSeen(): number {
    return this.#requestsSeen;
  }

  override start(): void {
    super.start();
    void this.#follow();
  }

  close(): Promise<void> {
    this.#unsubscribe();
    this.stop();
    clearTimeout(this.#announce);
    this.#generation += 1;
    const stream = this.#stream;
    this.#stream = null;
    return stream?.stop() ?? Promise.resolve();
  }

  protected async readCount(): Promise<number | undefined> {
    const client = this.context.session.client();
    if (!client) return 0;
    const generation = this.#generation;
    try {
      // Per view: `all` also holds the personal agent's threads, whose unread messages are the Agent section's badge.
      const answers = await Promise.all(
        (["coo", "group"] as const).map((view) => client.call("listConversations", { query: { view, limit: 100, messages: 0 } })),
      );
      if (generation !== this.#generation) return undefined;
      return answers.reduce((sum, answer) => sum + unreadOf(answer), 0);
    } catch {
      return undefined; // Offline (or an older server): keep the last count; the next poll tries again.
    }
  }

  /** (Re)starts following the stream for whoever is signed in now. */
  async #follow(): Promise<void> {
    const generation = ++this.#generation;
    const previous = this.#stream;
    this.#stream = null;
    await previous?.stop();
    const credentials = this.context.session.credentials();
    const client = this.context.session.client();
    if (!credentials || !client) return;
    const cursor = await startingCursor(client, () => generation !== this.#generation);
    if (cursor === null || generation !== this.#generation) {
      // Out of reach at sign-in (or an older server): try again with the next poll.
      if (cursor === null && generation === this.#generation) setTimeout(() => this.#retry(generation), POLL_INTERVAL_MS).unref();
      return;
    }
    this.#stream = followUserStream({
      serverUrl: credentials.serverUrl,
      apiKey: credentials.apiKey,
      cursor,
      onEvent: (event) => {
        if (generation !== this.#generation) return;
        // Every event, for the rest of the host (the bridge refreshes the owner's approvals on `tool.approval_requested`).
        this.context.events.emit("user-event", event);
        if (event.type === "message_request") {
          this.#requestsSeen += 1;
          this.onChange();
          return;
        }
        const arrival = arrivalOf(event);
        if (!arrival) return;
        this.#latest = arrival;
        this.onChange();
        void this.refresh();
        this.#announce ??= setTimeout(() => {
          this.#announce = undefined;
          if (generation === this.#generation && this.#latest) this.context.events.emit("inbox-message", this.#latest);
        }, ANNOUNCE_QUIET_MS);
      },
      // A revoked key, or an older server without the stream: the count is still polled.
      onRefused: () => {},
    });
  }

  #retry(generation: number): void {
    if (generation === this.#generation) void this.#follow();
  }
}

/**
 * Where the user's channel stands now: the last kept event's cursor, read in pages from the start.
 * Null when the server cannot be asked (offline, or no such route).
 */
async function startingCursor(client: TandemClient, cancelled: () => boolean): Promise<string | null> {
  let cursor = "0";
  try {
    for (;;) {
      const page = await client.call("agentEvents", { query: { cursor, limit: EVENTS_PAGE } });
      cursor = page.cursor;
      if (page.events.length < EVENTS_PAGE || cancelled()) return cursor;
    }
  } catch {
    return null;
  }
}
