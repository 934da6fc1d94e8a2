import type { delegationRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";

export function delegationHandlers(_context: AppContext): RouteHandlers<keyof typeof delegationRoutes> {
  return {};
}
