import type { IncomingMessage, ServerResponse } from "node:http";
import { REALTIME_PAGE_SIZE } from "@tandem/core";
import type { DevicePrincipal, UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { markDispatched } from "./dispatch-marking";
import { latestCursor, type RealtimeEvent, type StreamEndReason, type StreamKey } from "./event-log";
import { readUserEvents, type UserEvent } from "./user-events";

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  // Tells nginx-style proxies not to buffer: a buffered event is a late event.
  "x-accel-buffering": "no",
} as const;

export const PING_FRAME = ": ping\n\n";

/** `event: <type>`, `data: <the event's JSON>`, `id: <cursor>`, blank line. */
export function formatFrame(event: { cursor: string; type: string }): string {
  // Types are the server's own words; a line break in one would still break the framing.
  const type = event.type.replace(/[\r\n]/g, " ");
  return `event: ${type}\ndata: ${JSON.stringify(event)}\nid: ${event.cursor}\n\n`;
}

/** Why a stream ends; `credential_revoked`, `shutdown` and `error` also close the connection. */
type EndReason = StreamEndReason | "lifetime" | "error" | "credential_revoked";

/** What one kind of stream reads and checks; everything else about following a log is shared. */
export interface StreamSource<E extends { cursor: string; type: string }> {
  readonly key: StreamKey;
  /** The events after `cursor` the reader may see, in the wire's shape. */
  read(cursor: number, limit: number): Promise<E[]>;
  /** After a page was written to the socket (a device's deliveries become `dispatched`). */
  written?(events: E[]): Promise<void>;
  /** On each idle tick: false ends the stream (the credential no longer speaks for this reader). */
  verify?(): Promise<boolean>;
  /** Logged with a failure. */
  readonly label: Record<string, unknown>;
}

/**
 * One open SSE stream of a log (`GET /local-realtime/stream`, `GET /agent/stream`). It subscribes
 * to the key's notifications first, then reads from the cursor (replay, in pages) and keeps reading
 * whenever the log grows (live). One read is in flight at a time; a notification arriving meanwhile
 * sets `dirty`, which makes the reader go round once more, so no event is skipped, and reading
 * strictly after the last cursor sent means none is sent twice. The server ends the stream after
 * its lifetime (plus jitter); the client reconnects with the last cursor.
 *
 * Notifications are a hint, the log is the truth: a fallback tick also compares the log's newest
 * cursor with the last one sent, so an event whose wake-up never came (another instance without a
 * working Redis, a CLI) still arrives, only later.
 */
export class EventStream<E extends { cursor: string; type: string }> {
  #cursor: number;
  #reading = false;
  #dirty = false;
  #closed = false;
  #lastWriteAt = performance.now();
  #pingTimer: NodeJS.Timeout | undefined;
  #pollTimer: NodeJS.Timeout | undefined;
  #lifetimeTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #unregister: (() => void) | undefined;

  constructor(
    private readonly context: AppContext,
    private readonly source: StreamSource<E>,
    cursor: number,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    this.#cursor = cursor;
  }

  /** Sends the headers at once, then replays and follows the log until the stream ends. */
  start(): void {
    const { config, realtime } = this.context;
    this.req.socket.setNoDelay(true);
    this.res.writeHead(200, SSE_HEADERS);
    this.res.flushHeaders();
    // The client went away (or the response ended): stop everything this stream holds.
    this.res.on("close", () => this.#release());
    // A wake-up naming a cursor already sent (this instance's own, seen twice) costs no read.
    this.#unsubscribe = realtime.subscribe(this.source.key, (cursor) => {
      if (cursor === undefined || cursor > this.#cursor) this.#wake();
    });
    const lifetime = config.streamLifetimeMs + Math.floor(Math.random() * (config.streamJitterMs + 1));
    this.#lifetimeTimer = setTimeout(() => this.end("lifetime"), lifetime);
    this.#schedulePing(config.streamPingMs);
    this.#schedulePoll();
    // Last: during a shutdown this ends the stream straight away.
    this.#unregister = realtime.registerStream(this.source.key, (reason) => this.end(reason));
    this.#wake();
  }

  /** Ends the response; on shutdown (or a failure, or a revoked credential) the connection too. */
  end(reason: EndReason): void {
    if (this.#closed) return;
    this.#release();
    if (this.res.writableEnded) return;
    this.res.end();
    if (reason === "shutdown" || reason === "error" || reason === "credential_revoked") this.req.socket.end();
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#pingTimer);
    clearTimeout(this.#pollTimer);
    clearTimeout(this.#lifetimeTimer);
    this.#unsubscribe?.();
    this.#unregister?.();
  }

  #wake(): void {
    if (this.#closed) return;
    if (this.#reading) {
      this.#dirty = true;
      return;
    }
    this.#reading = true;
    void this.#pump();
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        this.#dirty = false;
        const events = await this.source.read(this.#cursor, REALTIME_PAGE_SIZE);
        if (this.#closed) return;
        if (events.length > 0) {
          const flushed = this.res.write(events.map(formatFrame).join(""));
          this.#cursor = Number((events.at(-1) as E).cursor);
          this.#lastWriteAt = performance.now();
          await this.source.written?.(events);
          // A slow reader: wait until the socket takes more before reading the next page.
          if (!flushed) await this.#drained();
          if (this.#closed) return;
        }
        if (events.length === REALTIME_PAGE_SIZE || this.#dirty) continue;
        // Decided in the same tick as the check above, so a notification cannot fall between.
        this.#reading = false;
        return;
      }
    } catch (error) {
      this.#reading = false;
      if (this.#closed) return;
      this.context.logger.warn({ err: error, ...this.source.label }, "realtime stream failed; ending it");
      this.end("error");
    }
  }

  #drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.res.off("drain", done);
        this.res.off("close", done);
        resolve();
      };
      this.res.on("drain", done);
      this.res.on("close", done);
    });
  }

  /** The idle tick: a `: ping` when nothing was written for the ping interval, and the credential looked at again. */
  #schedulePing(delayMs: number): void {
    this.#pingTimer = setTimeout(() => this.#pingTick(), Math.max(1, delayMs));
  }

  #pingTick(): void {
    if (this.#closed) return;
    const pingMs = this.context.config.streamPingMs;
    if (performance.now() - this.#lastWriteAt >= pingMs - 1) {
      this.res.write(PING_FRAME);
      this.#lastWriteAt = performance.now();
    }
    void this.#verify();
    this.#schedulePing(pingMs - (performance.now() - this.#lastWriteAt));
  }

  async #verify(): Promise<void> {
    try {
      if (this.source.verify && !(await this.source.verify())) this.end("credential_revoked");
    } catch {
      // A failed look is retried on the next tick; the credential is checked again on reconnect.
    }
  }

  /**
   * The fallback tick: one primary-key read of the log's newest cursor. It finds events whose
   * wake-up never reached this instance, and a device endpoint revoked by any process. With Redis
   * (several instances) it runs every `streamPollMs`; without, on the ping interval, as one
   * instance hears its own appends at once.
   */
  #schedulePoll(): void {
    const { config } = this.context;
    const every = config.redisUrl ? Math.min(config.streamPollMs, config.streamPingMs) : config.streamPingMs;
    this.#pollTimer = setTimeout(() => void this.#pollTick(), every);
  }

  async #pollTick(): Promise<void> {
    if (this.#closed) return;
    try {
      const latest = await latestCursor(this.context.db, this.source.key);
      if (latest === null) this.end("endpoint_revoked");
      else if (latest > this.#cursor) this.#wake();
    } catch {
      // A failed look is retried on the next tick.
    }
    if (!this.#closed) this.#schedulePoll();
  }
}

/** `GET /local-realtime/stream`: a device's log; writing a `message.dispatch` dispatches its delivery. */
export function deviceStream(
  context: AppContext,
  reader: DevicePrincipal,
  endpointId: string,
  cursor: number,
  req: IncomingMessage,
  res: ServerResponse,
): EventStream<RealtimeEvent> {
  const source: StreamSource<RealtimeEvent> = {
    key: { endpointId },
    read: (after, limit) => context.realtime.read(context.db, endpointId, after, limit),
    written: async (events) => {
      await markDispatched(context.db, context.clock, reader, events);
    },
    label: { endpointId },
  };
  return new EventStream(context, source, cursor, req, res);
}

/**
 * `GET /agent/stream`: a person's log, only the kinds the opening credential may see. On every
 * idle tick the credential that opened it is verified again: a revoked key (by any process) ends
 * the stream, and the reconnect meets the 401.
 */
export function userStream(
  context: AppContext,
  reader: UserPrincipal,
  /** The token the stream was opened with. */
  token: string,
  cursor: number,
  req: IncomingMessage,
  res: ServerResponse,
): EventStream<UserEvent> {
  const { userId, credential } = reader;
  const source: StreamSource<UserEvent> = {
    key: { userId },
    read: (after, limit) => readUserEvents(context.db, userId, after, limit, credential.scopes),
    verify: async () => {
      const principal = await context.authenticator.verify(token);
      return principal !== null && principal.userId === userId && principal.credential.id === credential.id;
    },
    label: { userId },
  };
  return new EventStream(context, source, cursor, req, res);
}
