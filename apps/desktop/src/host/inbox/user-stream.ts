import { UserEvent } from "@tandem/core";
import type { z } from "zod";
import { SseParser } from "../bridge/sse-parser";
import { apiUrlOf, delay } from "../bridge/wire-client";

/** The server ends each stream after about a minute; come back at once. */
const RECONNECT_AFTER_END_MS = 50;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** The server pings an idle stream every 15 s: this long without a byte means the connection is dead. */
const IDLE_TIMEOUT_MS = 45_000;

/** One event of the user's channel: `{cursor, type, createdAt, data}`. */
export type UserStreamEvent = z.infer<typeof UserEvent>;

export interface UserStreamOptions {
  readonly serverUrl: string;
  readonly apiKey: string;
  /** Resume after this cursor (exclusive). */
  readonly cursor: string;
  /** Each event after the cursor, once, in order (unknown types included: the caller ignores them). */
  readonly onEvent: (event: UserStreamEvent) => void;
  /** The server refused the key (401: revoked, or signed out elsewhere) or has no such stream (404, an older one). */
  readonly onRefused: (status: number) => void;
}

/**
 * Follows the user's realtime channel, `GET /agent/stream` (server-sent events, the bridges' cursor
 * semantics), for as long as it runs: it reconnects after each end from the last cursor seen, so
 * nothing is lost or repeated, and backs off while the server is out of reach.
 */
export function followUserStream(options: UserStreamOptions): { stop(): Promise<void> } {
  const controller = new AbortController();
  let cursor = BigInt(options.cursor);

  const handle = (data: string) => {
    const parsed = UserEvent.safeParse(safeJson(data));
    // Not an event we understand, or one already seen: the wire says to skip both.
    if (!parsed.success || !/^\d+$/.test(parsed.data.cursor) || BigInt(parsed.data.cursor) <= cursor) return;
    cursor = BigInt(parsed.data.cursor);
    options.onEvent(parsed.data);
  };

  /** One connection, read to its end; answers the refusing status, or null when the stream just ended. */
  async function readOnce(): Promise<number | null> {
    const idle = new AbortController();
    let idleTimer = setTimeout(() => idle.abort(), IDLE_TIMEOUT_MS);
    try {
      const response = await fetch(`${apiUrlOf(options.serverUrl)}/agent/stream?cursor=${cursor}`, {
        headers: { authorization: `Bearer ${options.apiKey}`, accept: "text/event-stream" },
        redirect: "manual",
        signal: AbortSignal.any([controller.signal, idle.signal]),
      });
      if (response.status === 401 || response.status === 404) {
        await response.body?.cancel();
        return response.status;
      }
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel();
        throw new Error(`the inbox stream answered ${response.status}`);
      }
      const parser = new SseParser();
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => idle.abort(), IDLE_TIMEOUT_MS);
        for (const data of parser.push(decoder.decode(chunk, { stream: true }))) handle(data);
      }
      return null;
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
      } catch {
        if (controller.signal.aborted) return;
        // Out of reach (or cut off): try again later, with jitter so many clients do not return at once.
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

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
