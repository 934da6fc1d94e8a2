import { RealtimeEvent } from "@tandem/core";
import { followSse } from "./sse-follower";
import { apiUrlOf } from "./wire-client";

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
  let cursor = options.cursor;

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

  return followSse({
    url: () => `${apiUrlOf(options.serverUrl)}/local-realtime/stream?${new URLSearchParams({ endpointId: options.endpointId, cursor })}`,
    bearer: options.deviceToken,
    name: "realtime stream",
    onData: handleFrame,
    onOpen: () => options.onConnection(true, null),
    onProblem: (problem) => options.onConnection(false, problem),
    onRefused: () => {
      options.onConnection(false, "The server no longer accepts this endpoint's token");
      options.onRevoked();
    },
  });
}
