import type { auditRoutes } from "@tandem/core";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";
import { listAuditEntries } from "./audit-listing";

export function auditHandlers(context: AppContext): RouteHandlers<keyof typeof auditRoutes> {
  return {
    listAudit: async ({ input, principal }) => ({ success: true, ...(await listAuditEntries(context.db, principal.userId, input.query)) }),
  };
}
