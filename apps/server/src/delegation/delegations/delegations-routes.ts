import type { delegationRoutes } from "@tandem/core";
import type { AppContext } from "../../context";
import { created, Reply } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { deleteAllowance, listAllowances, listCollaborations, respondToCollaboration } from "./collaboration-answers";
import { expireDueCollaborations } from "./collaboration-expiry";
import { delegate } from "./delegation-service";

const ANSWERS = { allow_once: "Allowed once", always_allow: "Always allowed", deny: "Declined" } as const;

export function delegationHandlers(context: AppContext): RouteHandlers<keyof typeof delegationRoutes> {
  // Unanswered requests expire (and their bridges hear it) even when nobody asks again.
  context.maintenance.add("collaborations.expire", () => expireDueCollaborations(context));
  return {
    createDelegation: async ({ input, principal }) => {
      const answer = await delegate(context, principal, input.body);
      const body = { success: true, ok: true, ...answer };
      return answer.status === "delegated" ? created(body) : new Reply(202, body);
    },
    listCollaborations: async ({ input, principal }) => ({
      success: true,
      ...(await listCollaborations(context, principal.userId, input.query)),
    }),
    respondToCollaboration: async ({ input, principal }) => {
      const collaboration = await respondToCollaboration(context, principal, input.params.id, input.body.decision);
      return { success: true, collaboration, message: `${ANSWERS[input.body.decision]}: ${collaboration.task.slice(0, 80)}` };
    },
    listCollaborationAllowances: async ({ principal }) => ({ success: true, allowances: await listAllowances(context, principal.userId) }),
    deleteCollaborationAllowance: async ({ input, principal }) => {
      await deleteAllowance(context, principal, input.params.principalId);
      return { success: true, message: `Principal ${input.params.principalId} must ask again before delegating` };
    },
  };
}
