import { UserEvent } from "@tandem/core";
import type { z } from "zod";
import { followSse } from "../bridge/sse-follower";
import { apiUrlOf } from "../bridge/wire-client";

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
  let cursor = BigInt(options.cursor);
  return followSse({
    url: () => `${apiUrlOf(options.serverUrl)}/agent/stream?cursor=${cursor}`,
    bearer: options.apiKey,
    name: "inbox stream",
    onData: (data) => {
      const parsed = UserEvent.safeParse(safeJson(data));
      // Not an event we understand, or one already seen: the wire says to skip both.
      if (!parsed.success || !/^\d+$/.test(parsed.data.cursor) || BigInt(parsed.data.cursor) <= cursor) return;
      cursor = BigInt(parsed.data.cursor);
      options.onEvent(parsed.data);
    },
    onRefused: options.onRefused,
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
