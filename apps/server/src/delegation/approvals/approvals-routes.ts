import type { approvalRoutes } from "@tandem/core";
import type { AppContext } from "../../context";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { onGrantEnd } from "../grants";
import { expireApprovalsOfEndedGrant, expireDueApprovals } from "./approval-expiry";
import { getToolApproval, listToolApprovals, requestToolApproval, resolveToolApproval } from "./approval-service";
import { createToolPolicy, deleteToolPolicy, listToolPolicies } from "./tool-policies";

export function approvalHandlers(context: AppContext): RouteHandlers<keyof typeof approvalRoutes> {
  // Pending approvals deny when left alone (also when nobody reads them) and when their grant ends.
  context.maintenance.add("tool-approvals.expire", () => expireDueApprovals(context));
  onGrantEnd(expireApprovalsOfEndedGrant);
  return {
    requestToolApproval: async ({ input, principal }) =>
      created({ success: true, ...(await requestToolApproval(context, principal, input.body)) }),
    listToolApprovals: async ({ input, principal }) => ({
      success: true,
      approvals: await listToolApprovals(context, principal, input.query),
    }),
    getToolApproval: async ({ input, principal }) => ({ success: true, ...(await getToolApproval(context, principal, input.params.id)) }),
    resolveToolApproval: async ({ input, principal }) => {
      const approval = await resolveToolApproval(context, principal, input.params.id, input.body);
      const verb = approval.decision === "allow" ? "Allowed" : "Denied";
      return { success: true, ...approval, message: `${verb} ${approval.toolName} (${approval.scope})` };
    },
    listToolPolicies: async ({ principal }) => ({ success: true, policies: await listToolPolicies(context, principal.userId) }),
    createToolPolicy: async ({ input, principal }) => {
      const policy = await createToolPolicy(context, principal, input.body);
      return created({ success: true, policy, message: `Allowed ${policy.toolName} without asking` });
    },
    deleteToolPolicy: async ({ input, principal }) => {
      await deleteToolPolicy(context, principal, input.params.id);
      return { success: true, message: `Removed tool policy ${input.params.id}` };
    },
  };
}
