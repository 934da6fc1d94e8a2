import type { networkRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";

export function networkHandlers(_context: AppContext): RouteHandlers<keyof typeof networkRoutes> {
  return {};
}
