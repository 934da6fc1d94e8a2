import type { grantRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";

export function grantHandlers(_context: AppContext): RouteHandlers<keyof typeof grantRoutes> {
  return {};
}
