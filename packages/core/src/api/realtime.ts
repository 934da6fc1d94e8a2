import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** Most events one poll answers, and the page size a stream replays in. */
export const REALTIME_PAGE_SIZE = 500;

/** One event of an endpoint's realtime log: the `data:` JSON of a stream frame, an item of a poll. */
export const RealtimeEvent = z.object({
  cursor: z.string().describe("decimal integer string, increasing per endpoint; resume after it"),
  type: z.string().describe("message.dispatch, grant.activated, tool.approval_decision, …; ignore unknown types"),
  endpointId: z.string(),
  createdAt: Timestamp,
  data: z.record(z.string(), z.unknown()),
});
export type RealtimeEvent = z.infer<typeof RealtimeEvent>;

/**
 * A cursor as a query string carries it: a decimal integer ≥ 0, events after it (exclusive).
 * Empty means absent (from the start), as a bridge without a cursor yet may send `cursor=`.
 */
export const RealtimeCursor = z
  .string()
  .regex(/^\d*$/, { error: "must be a decimal integer ≥ 0 (the last cursor seen)" })
  .transform((text) => (text === "" ? 0 : Number(text)))
  .refine(Number.isSafeInteger, { error: "is too large" });

const EndpointId = z.string().trim().min(1, { error: "is required" }).max(200);

const StreamQuery = z.object({
  endpointId: EndpointId.describe("the endpoint of the device token"),
  cursor: RealtimeCursor.default(0).describe("the last cursor seen; events after it are replayed (default 0: all)"),
});

export const realtimeRoutes = {
  realtimeStream: defineRoute({
    method: "GET",
    path: "/local-realtime/stream",
    category: "realtime",
    summary:
      "Server-sent events for one endpoint: replays events after the cursor (or Last-Event-ID), then live ones; `: ping` when idle; ends after about 55 s",
    auth: "device",
    query: StreamQuery,
    response: RealtimeEvent.describe("each frame is `event: <type>`, `data: <this JSON>`, `id: <cursor>`, then a blank line"),
    responseMediaType: "text/event-stream",
  }),
  realtimePoll: defineRoute({
    method: "GET",
    path: "/local-realtime/poll",
    category: "realtime",
    summary: "The same events as the stream, after the cursor, up to 500 at a time, for bridges that cannot hold a connection",
    auth: "device",
    query: StreamQuery.extend({
      limit: z.coerce
        .number({ error: "must be a number from 1 to 500" })
        .int({ error: "must be a whole number from 1 to 500" })
        .min(1, { error: "must be a number from 1 to 500" })
        .max(REALTIME_PAGE_SIZE, { error: "must be a number from 1 to 500" })
        .default(REALTIME_PAGE_SIZE),
    }),
    response: success({
      events: z.array(RealtimeEvent),
      cursor: z.string().describe("the last event's cursor, or the cursor given when there is none: poll again with it"),
    }),
  }),
} as const;
