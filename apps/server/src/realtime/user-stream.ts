import type { IncomingMessage, ServerResponse } from "node:http";
import { REALTIME_PAGE_SIZE } from "@tandem/core";
import type { UserPrincipal } from "../auth/principal";
import type { AppContext } from "../context";
import { PING_FRAME, SSE_HEADERS } from "./sse-stream";
import { latestUserCursor, readUserEvents, type UserEvent, userChannel } from "./user-events";

/** `event: <type>`, `data: <the event's JSON>`, `id: <cursor>`, blank line: the bridges' framing. */
function formatUserFrame(event: UserEvent): string {
  const type = event.type.replace(/[\r\n]/g, " ");
  return `event: ${type}\ndata: ${JSON.stringify(event)}\nid: ${event.cursor}\n\n`;
}

/**
 * One open `GET /agent/stream`: the user-level twin of the bridges' stream, with the same cursor
 * semantics (replay after the cursor in pages, then live; one read in flight, a `dirty` flag so no
 * notification is lost; strictly after the last cursor sent, so none is sent twice), the same
 * lifetime, jitter and pings. On every idle tick it verifies the credential that opened it again:
 * a revoked key (by any process) ends the stream, and the reconnect meets the 401.
 */
export class UserStream {
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
    private readonly reader: UserPrincipal,
    /** The token the stream was opened with, verified again on each tick. */
    private readonly token: string,
    cursor: number,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    this.#cursor = cursor;
  }

  start(): void {
    const { config, realtime } = this.context;
    const channel = userChannel(this.reader.userId);
    this.req.socket.setNoDelay(true);
    this.res.writeHead(200, SSE_HEADERS);
    this.res.flushHeaders();
    this.res.on("close", () => this.#release());
    this.#unsubscribe = realtime.subscribe(channel, () => this.#wake());
    const lifetime = config.streamLifetimeMs + Math.floor(Math.random() * (config.streamJitterMs + 1));
    this.#lifetimeTimer = setTimeout(() => this.end(false), lifetime);
    this.#schedulePing(config.streamPingMs);
    this.#unregister = realtime.registerStream(channel, (reason) => this.end(reason === "shutdown"));
    this.#wake();
  }

  end(closeSocket: boolean): void {
    if (this.#closed) return;
    this.#release();
    if (this.res.writableEnded) return;
    this.res.end();
    if (closeSocket) this.req.socket.end();
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
        const events = await readUserEvents(
          this.context.db,
          this.reader.userId,
          this.#cursor,
          REALTIME_PAGE_SIZE,
          this.reader.credential.scopes,
        );
        if (this.#closed) return;
        if (events.length > 0) {
          const flushed = this.res.write(events.map(formatUserFrame).join(""));
          this.#cursor = Number((events.at(-1) as UserEvent).cursor);
          this.#lastWriteAt = performance.now();
          if (!flushed) await this.#drained();
          if (this.#closed) return;
        }
        if (events.length === REALTIME_PAGE_SIZE || this.#dirty) continue;
        this.#reading = false;
        return;
      }
    } catch (error) {
      this.#reading = false;
      if (this.#closed) return;
      this.context.logger.warn({ err: error, userId: this.reader.userId }, "user stream failed; ending it");
      this.end(true);
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
    void this.#check();
    this.#schedulePing(pingMs - (performance.now() - this.#lastWriteAt));
  }

  /**
   * The credential still verifies as the same user (else the stream ends), and the log has not
   * grown behind this instance's back (another server instance appended: notifications are
   * in-process).
   */
  async #check(): Promise<void> {
    try {
      const principal = await this.context.authenticator.verify(this.token);
      if (this.#closed) return;
      if (!principal || principal.userId !== this.reader.userId || principal.credential.id !== this.reader.credential.id) {
        this.end(true);
        return;
      }
      if ((await latestUserCursor(this.context.db, this.reader.userId)) > this.#cursor) this.#wake();
    } catch {
      // A failed look is retried on the next tick; the credential is checked again on reconnect.
    }
  }
}
