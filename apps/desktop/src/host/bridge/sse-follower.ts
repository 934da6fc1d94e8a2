import { SseParser } from "./sse-parser";
import { delay } from "./wire-client";

/** The server ends each stream after about a minute; come back about 50 ms later. */
const RECONNECT_AFTER_END_MS = 50;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** Without even a `: ping` for this long (the server pings every 15 s), the connection is presumed dead. */
const IDLE_TIMEOUT_MS = 45_000;

export interface SseFollowOptions {
  /** The address of the next connection; asked before each, so it carries the cursor as it moves. */
  readonly url: () => string;
  readonly bearer: string;
  /** Names the stream in the errors it reports ("the inbox stream answered 500"). */
  readonly name: string;
  /**
   * One frame's data, in order; the next is read only once this settles. A throw drops the
   * connection, which is opened again after a backoff (so the caller's cursor decides what comes again).
   */
  readonly onData: (data: string) => void | Promise<void>;
  /** A connection was opened (200). */
  readonly onOpen?: () => void;
  /** A connection failed or was cut; following goes on after a backoff. */
  readonly onProblem?: (problem: string) => void;
  /** 401 or 404: the credential or the stream is gone (revoked, an older server); following ends. */
  readonly onRefused: (status: number) => void;
}

export interface SseFollower {
  stop(): Promise<void>;
}

/**
 * Follows a server-sent-event stream over fetch for as long as it runs: reads each connection to
 * its end, reconnects at once after the server ends one, backs off (doubling, with jitter, up to
 * 30 s) while the server is out of reach, and drops a connection silent for 45 s. The bridge's
 * realtime stream and the inbox's user stream share it; each keeps its own cursor.
 */
export function followSse(options: SseFollowOptions): SseFollower {
  const controller = new AbortController();

  /** One connection, read to its end; answers the refusing status, or null when the stream just ended. */
  async function readOnce(): Promise<number | null> {
    const idle = new AbortController();
    let idleTimer = setTimeout(() => idle.abort(), IDLE_TIMEOUT_MS);
    try {
      const response = await fetch(options.url(), {
        headers: { authorization: `Bearer ${options.bearer}`, accept: "text/event-stream" },
        redirect: "manual",
        signal: AbortSignal.any([controller.signal, idle.signal]),
      });
      if (response.status === 401 || response.status === 404) {
        await response.body?.cancel();
        return response.status;
      }
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel();
        throw new Error(`the ${options.name} answered ${response.status}`);
      }
      options.onOpen?.();
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return null;
          clearTimeout(idleTimer);
          idleTimer = setTimeout(() => idle.abort(), IDLE_TIMEOUT_MS);
          for (const data of parser.push(decoder.decode(value, { stream: true }))) await options.onData(data);
        }
      } finally {
        reader.releaseLock();
        await response.body.cancel().catch(() => {});
      }
    } finally {
      clearTimeout(idleTimer);
    }
  }

  const running = (async () => {
    let backoff = FIRST_BACKOFF_MS;
    while (!controller.signal.aborted) {
      try {
        const refused = await readOnce();
        if (refused !== null) {
          if (!controller.signal.aborted) options.onRefused(refused);
          return;
        }
        backoff = FIRST_BACKOFF_MS;
        await delay(RECONNECT_AFTER_END_MS, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) return;
        options.onProblem?.(error instanceof Error ? error.message : String(error));
        // Jitter spreads reconnects when a server comes back to many clients at once.
        await delay(backoff * (0.75 + Math.random() / 2), controller.signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  })();

  return {
    async stop() {
      controller.abort();
      await running;
    },
  };
}
