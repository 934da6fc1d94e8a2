import type { auditRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";

export function auditHandlers(_context: AppContext): RouteHandlers<keyof typeof auditRoutes> {
  return {};
}
