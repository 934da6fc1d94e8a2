import type { runtimeRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";

export function runtimeHandlers(_context: AppContext): RouteHandlers<keyof typeof runtimeRoutes> {
  return {};
}
