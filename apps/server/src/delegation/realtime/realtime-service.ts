import { RealtimeCursor } from "@tandem/core";
import type { DevicePrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { ApiError, badRequest } from "../../http/errors";
import { markDispatched } from "./dispatch-marking";
import type { RealtimeEvent } from "./event-log";

/**
 * A device token speaks for its own endpoint only. Any other id, whoever owns it, is "not found":
 * the answer must not tell a bridge which endpoint ids exist.
 */
export function assertOwnEndpoint(reader: DevicePrincipal, endpointId: string): void {
  if (endpointId !== reader.credential.id) {
    throw new ApiError(404, "endpoint_not_found", `Endpoint ${endpointId} not found for this device token`);
  }
}

/**
 * Where a stream resumes: `Last-Event-ID` wins over the query's cursor, because a browser's
 * EventSource resends the original URL (with the first cursor) and puts the last id it saw there.
 */
export function resumeCursor(queryCursor: number, lastEventId: string | string[] | undefined): number {
  const header = Array.isArray(lastEventId) ? lastEventId[0] : lastEventId;
  if (header === undefined || header.trim() === "") return queryCursor;
  const parsed = RealtimeCursor.safeParse(header.trim());
  if (!parsed.success) throw badRequest("invalid_request", "Last-Event-ID: must be a decimal integer ≥ 0 (the last cursor seen)");
  return parsed.data;
}

export interface PollAnswer {
  events: RealtimeEvent[];
  /** The last cursor returned, or the one asked with when nothing is new. */
  cursor: string;
}

/** `GET /local-realtime/poll`: the events after `cursor`; returning them dispatches their deliveries. */
export async function pollEvents(
  context: AppContext,
  reader: DevicePrincipal,
  request: { endpointId: string; cursor: number; limit: number },
): Promise<PollAnswer> {
  assertOwnEndpoint(reader, request.endpointId);
  const events = await context.realtime.read(context.db, request.endpointId, request.cursor, request.limit);
  await markDispatched(context.db, context.clock, reader, events);
  return { events, cursor: events.at(-1)?.cursor ?? String(request.cursor) };
}
