import type { approvalRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";

export function approvalHandlers(_context: AppContext): RouteHandlers<keyof typeof approvalRoutes> {
  return {};
}
