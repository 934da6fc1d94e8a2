import { RealtimeEvent } from "@tandem/core";
import { SseParser } from "./sse-parser";
import { apiUrlOf, delay } from "./wire-client";

/** The server ends each stream after about a minute; bridges come back about 50 ms later. */
const RECONNECT_AFTER_END_MS = 50;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** Without even a `: ping` for this long (the server pings every 15 s), the connection is presumed dead. */
const IDLE_TIMEOUT_MS = 45_000;

export interface RealtimeFollowerOptions {
  readonly serverUrl: string;
  readonly deviceToken: string;
  readonly endpointId: string;
  /** Where to resume: the last cursor handled (exclusive). */
  readonly cursor: string;
  /**
   * Handles one event. The cursor moves past it only once this resolves; if it throws, the stream
   * is dropped and the event comes again after a backoff, so nothing is lost.
   */
  readonly onEvent: (event: RealtimeEvent) => Promise<void>;
  /** Persists the cursor after an event was handled (so a restart resumes exactly there). */
  readonly saveCursor: (cursor: string) => Promise<void>;
  readonly onConnection: (connected: boolean, problem: string | null) => void;
  /** 401/404: the token or endpoint is gone (revoked, or rotated by another pairing). */
  readonly onRevoked: () => void;
}

export interface RealtimeFollower {
  stop(): Promise<void>;
}

/** Follows `GET /local-realtime/stream` (SSE over fetch) from a cursor, for as long as it runs. */
export function followRealtime(options: RealtimeFollowerOptions): RealtimeFollower {
  const controller = new AbortController();
  let cursor = options.cursor;

  async function connectOnce(): Promise<"ended" | "revoked"> {
    const query = new URLSearchParams({ endpointId: options.endpointId, cursor });
    const idle = new AbortController();
    let idleTimer = setTimeout(() => idle.abort(), IDLE_TIMEOUT_MS);
    const signal = AbortSignal.any([controller.signal, idle.signal]);
    try {
      const response = await fetch(`${apiUrlOf(options.serverUrl)}/local-realtime/stream?${query}`, {
        headers: { authorization: `Bearer ${options.deviceToken}`, accept: "text/event-stream" },
        redirect: "manual",
        signal,
      });
      if (response.status === 401 || response.status === 404) {
        await response.body?.cancel();
        return "revoked";
      }
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel();
        throw new Error(`the realtime stream answered ${response.status}`);
      }
      options.onConnection(true, null);
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return "ended";
          clearTimeout(idleTimer);
          idleTimer = setTimeout(() => idle.abort(), IDLE_TIMEOUT_MS);
          for (const data of parser.push(decoder.decode(value, { stream: true }))) {
            await handleFrame(data);
          }
        }
      } finally {
        reader.releaseLock();
        await response.body.cancel().catch(() => {});
      }
    } finally {
      clearTimeout(idleTimer);
    }
  }

  async function handleFrame(data: string): Promise<void> {
    let parsed: RealtimeEvent;
    try {
      parsed = RealtimeEvent.parse(JSON.parse(data));
    } catch {
      return; // Not an event we understand; the wire says to ignore what we do not know.
    }
    if (!/^\d+$/.test(parsed.cursor) || BigInt(parsed.cursor) <= BigInt(cursor)) return;
    await options.onEvent(parsed);
    cursor = parsed.cursor;
    await options.saveCursor(cursor);
  }

  const running = (async () => {
    let backoff = FIRST_BACKOFF_MS;
    while (!controller.signal.aborted) {
      try {
        const outcome = await connectOnce();
        if (outcome === "revoked") {
          options.onConnection(false, "The server no longer accepts this endpoint's token");
          if (!controller.signal.aborted) options.onRevoked();
          return;
        }
        backoff = FIRST_BACKOFF_MS;
        await delay(RECONNECT_AFTER_END_MS, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) return;
        options.onConnection(false, error instanceof Error ? error.message : String(error));
        // Jitter spreads reconnects when a server comes back to many bridges at once.
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
