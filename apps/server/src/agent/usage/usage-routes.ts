import type { agentUsageRoutes } from "@tandem/core";
import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { readModelUsage } from "./model-usage";

/** How far back GET /agent/usage counts when not told. */
const DEFAULT_PERIOD_MS = 30 * 24 * 60 * 60 * 1000;

export function agentUsageHandlers(context: AppContext): RouteHandlers<keyof typeof agentUsageRoutes> {
  return {
    getAgentUsage: async ({ input, principal }) => {
      const since = new Date(input.query.since ?? Date.now() - DEFAULT_PERIOD_MS).toISOString();
      return { success: true, since, usage: await readModelUsage(context.db, principal.userId, since) };
    },
    listAgentModels: () => ({
      success: true,
      provider: context.models.provider,
      models: context.models.list(),
      defaultAlias: "default",
    }),
  };
}
