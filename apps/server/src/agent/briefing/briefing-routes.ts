import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { type BriefingServiceOptions, createBriefingService } from "./briefing-service";

type BriefingRouteId = "createBriefing" | "listBriefings" | "briefingStrategies" | "briefingMatrix";

/** The briefing routes; the agent layer passes its model writer and usage recorder in `options`. */
export function briefingHandlers(
  context: AppContext,
  options: Pick<BriefingServiceOptions, "writer" | "onUsage"> = {},
): RouteHandlers<BriefingRouteId> {
  const service = createBriefingService({ db: context.db, logger: context.logger, ...options });
  return {
    createBriefing: async ({ input, principal }) => ({ success: true, ...(await service.create(principal, input.body)) }),
    listBriefings: async ({ input, principal }) => ({
      success: true,
      briefings: await service.history(principal.userId, input.query.limit),
    }),
    briefingStrategies: ({ input }) => ({ success: true, ...service.strategies(input.body) }),
    briefingMatrix: ({ input }) => ({ success: true, ...service.matrix(input.body) }),
  };
}
