import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { clientGoneSignal, withChatRunSlot } from "../chat/chat-routes";
import { checkBudgets } from "../usage/meters";
import { type BriefingServiceOptions, createBriefingService } from "./briefing-service";

type BriefingRouteId = "createBriefing" | "listBriefings" | "briefingStrategies" | "briefingMatrix";

/** The briefing routes; the agent layer passes its model writer and usage recorder in `options`. */
export function briefingHandlers(
  context: AppContext,
  options: Pick<BriefingServiceOptions, "writer" | "onUsage"> = {},
): RouteHandlers<BriefingRouteId> {
  const service = createBriefingService({ db: context.db, logger: context.logger, ...options });
  return {
    createBriefing: async ({ input, principal, req, res }) => {
      const create = () => service.create(principal, input.body, clientGoneSignal(req, res));
      // A model writes it: the caller's budgets are checked before the model is called.
      if (options.writer) await checkBudgets(context, { userId: principal.userId, apiKeyId: principal.credential.id });
      // A briefing a model writes is a run: it takes one of the user's run slots, as chat does (429 past them).
      return { success: true, ...(await (options.writer ? withChatRunSlot(context, principal.userId, create) : create())) };
    },
    listBriefings: async ({ input, principal }) => ({
      success: true,
      briefings: await service.history(principal.userId, input.query.limit),
    }),
    briefingStrategies: ({ input }) => ({ success: true, ...service.strategies(input.body) }),
    briefingMatrix: ({ input }) => ({ success: true, ...service.matrix(input.body) }),
  };
}
