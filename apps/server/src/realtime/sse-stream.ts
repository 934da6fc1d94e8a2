import type { IncomingMessage, ServerResponse } from "node:http";
import { REALTIME_PAGE_SIZE } from "@tandem/core";
import type { DevicePrincipal } from "../auth/principal";
import type { AppContext } from "../context";
import { markDispatched } from "./dispatch-marking";
import type { RealtimeEvent, StreamEndReason } from "./event-log";

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  // Tells nginx-style proxies not to buffer: a buffered event is a late event.
  "x-accel-buffering": "no",
} as const;

export const PING_FRAME = ": ping\n\n";

/** `event: <type>`, `data: <the event's JSON>`, `id: <cursor>`, blank line. */
export function formatFrame(event: RealtimeEvent): string {
  // Types are the server's own words; a line break in one would still break the framing.
  const type = event.type.replace(/[\r\n]/g, " ");
  return `event: ${type}\ndata: ${JSON.stringify(event)}\nid: ${event.cursor}\n\n`;
}

type EndReason = StreamEndReason | "lifetime" | "error";

/**
 * One open `GET /local-realtime/stream`. It subscribes to the endpoint's log first, then reads
 * from the cursor (replay, in pages) and keeps reading whenever the log grows (live). One read is
 * in flight at a time; a notification arriving meanwhile sets `dirty`, which makes the reader go
 * round once more, so no event is skipped, and reading strictly after the last cursor sent means
 * none is sent twice. The server ends the stream after its lifetime (plus jitter); the bridge
 * reconnects with the last cursor.
 */
export class RealtimeStream {
  #cursor: number;
  #reading = false;
  #dirty = false;
  #closed = false;
  #lastWriteAt = performance.now();
  #pingTimer: NodeJS.Timeout | undefined;
  #lifetimeTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #unregister: (() => void) | undefined;

  constructor(
    private readonly context: AppContext,
    private readonly reader: DevicePrincipal,
    private readonly endpointId: string,
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
    this.#unsubscribe = realtime.subscribe(this.endpointId, () => this.#wake());
    const lifetime = config.streamLifetimeMs + Math.floor(Math.random() * (config.streamJitterMs + 1));
    this.#lifetimeTimer = setTimeout(() => this.end("lifetime"), lifetime);
    this.#schedulePing(config.streamPingMs);
    // Last: during a shutdown this ends the stream straight away.
    this.#unregister = realtime.registerStream(this.endpointId, (reason) => this.end(reason));
    this.#wake();
  }

  /** Ends the response; on shutdown the connection too, so the server's close does not wait for it. */
  end(reason: EndReason): void {
    if (this.#closed) return;
    this.#release();
    if (this.res.writableEnded) return;
    this.res.end();
    if (reason === "shutdown" || reason === "error") this.req.socket.end();
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#pingTimer);
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
        const events = await this.context.realtime.read(this.context.db, this.endpointId, this.#cursor, REALTIME_PAGE_SIZE);
        if (this.#closed) return;
        if (events.length > 0) {
          const flushed = this.res.write(events.map(formatFrame).join(""));
          this.#cursor = Number((events.at(-1) as RealtimeEvent).cursor);
          this.#lastWriteAt = performance.now();
          await markDispatched(this.context.db, this.context.clock, this.reader, events);
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
      this.context.logger.warn({ err: error, endpointId: this.endpointId }, "realtime stream failed; ending it");
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

  /**
   * The idle tick: a `: ping` when nothing was written for the ping interval, and a look at the
   * endpoint's row. Its cursor tells whether the log grew without a notification here (another
   * server instance appended: live notifications are in-process), and its revocation ends the
   * stream even when the revocation happened on another instance. One primary-key read per tick.
   */
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
    void this.#checkEndpoint();
    this.#schedulePing(pingMs - (performance.now() - this.#lastWriteAt));
  }

  async #checkEndpoint(): Promise<void> {
    try {
      const row = await this.context.db
        .selectFrom("runtime_endpoints")
        .select(["event_cursor", "revoked_at"])
        .where("id", "=", this.endpointId)
        .executeTakeFirst();
      if (!row || row.revoked_at !== null) this.end("endpoint_revoked");
      else if (Number(row.event_cursor) > this.#cursor) this.#wake();
    } catch {
      // A failed look is retried on the next tick; the credential is checked again on reconnect.
    }
  }
}
