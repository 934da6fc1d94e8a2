import type { realtimeRoutes } from "@tandem/core";
import type { AppContext } from "../../context";
import { HANDLED, type RouteHandlers } from "../../http/router";
import { assertOwnEndpoint, pollEvents, resumeCursor } from "./realtime-service";
import { deviceStream } from "./sse-stream";

export function realtimeHandlers(context: AppContext): RouteHandlers<keyof typeof realtimeRoutes> {
  return {
    realtimeStream: ({ input, principal, req, res }) => {
      const { endpointId } = input.query;
      // Every refusal happens here, before the headers go out, so it is still a JSON error.
      assertOwnEndpoint(principal, endpointId);
      const cursor = resumeCursor(input.query.cursor, req.headers["last-event-id"]);
      deviceStream(context, principal, endpointId, cursor, req, res).start();
      return HANDLED;
    },
    realtimePoll: async ({ input, principal }) => {
      const answer = await pollEvents(context, principal, input.query);
      return { success: true, ...answer };
    },
  };
}
