import type { realtimeRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";

export function realtimeHandlers(_context: AppContext): RouteHandlers<keyof typeof realtimeRoutes> {
  return {};
}
