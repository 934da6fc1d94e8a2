import type { Escalation, escalationRoutes } from "@tandem/core";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { fromApproval } from "../../delegation/approvals/approval-escalation";
import { getToolApproval, listToolApprovals, resolveToolApproval } from "../../delegation/approvals/approval-service";
import { ApiError, conflict } from "../../http/errors";
import type { RouteHandlers } from "../../http/router";
import { decideEscalation, findOwnEscalation, listOwnEscalations, sweepEscalations, toEscalation } from "./escalations";

// A bridge's tool approval that waits for the owner (no decision, no policy) is an escalation in
// the owner's list too, read from `tool_approvals` as it is (no second copy to keep in step):
// allowed is continued, denied stopped, expired expired; auto-allowed ones never waited and are
// left out. Resolving it here decides the approval (continue: allow once; stop: deny).

const BRIDGE_PREFIX = "apr_";

const APPROVAL_STATUS = { pending: "pending", continued: "allowed", stopped: "denied", expired: "expired" } as const;

async function listAll(app: AppContext, owner: UserPrincipal, query: { status?: Escalation["status"]; limit: number }) {
  const own = await listOwnEscalations(app.db, owner.userId, query);
  const approvals = await listToolApprovals(app, owner, {
    limit: query.limit,
    status: query.status === undefined ? undefined : APPROVAL_STATUS[query.status],
  });
  const bridged = approvals.map(fromApproval).filter((e): e is Escalation => e !== null);
  return [...own, ...bridged]
    .sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)))
    .slice(0, query.limit);
}

async function resolveBridged(app: AppContext, owner: UserPrincipal, id: string, decision: "continue" | "stop") {
  try {
    const approval = await resolveToolApproval(app, owner, id, { decision: decision === "continue" ? "allow" : "deny", scope: "once" });
    return fromApproval(approval) as Escalation;
  } catch (error) {
    if (error instanceof ApiError && error.code === "approval_already_resolved") throw conflict("already_resolved", error.message);
    if (error instanceof ApiError && error.code === "approval_expired") throw conflict("expired", error.message);
    throw error;
  }
}

export function escalationHandlers(app: AppContext): RouteHandlers<keyof typeof escalationRoutes> {
  // Every instance sweeps; each step is a conditional update, so none happens twice.
  app.maintenance.add("escalations.sweep", () => sweepEscalations(app));
  return {
    listEscalations: async ({ input, principal }) => ({ success: true, escalations: await listAll(app, principal, input.query) }),
    getEscalation: async ({ input, principal }) => {
      const { id } = input.params;
      if (id.startsWith(BRIDGE_PREFIX)) {
        const escalation = fromApproval(await getToolApproval(app, principal, id));
        if (escalation) return { success: true, escalation };
      }
      return { success: true, escalation: toEscalation(await findOwnEscalation(app.db, principal.userId, id)) };
    },
    resolveEscalation: async ({ input, principal }) => {
      const { id } = input.params;
      const escalation = id.startsWith(BRIDGE_PREFIX)
        ? await resolveBridged(app, principal, id, input.body.decision)
        : await decideEscalation(app, principal.userId, id, input.body.decision);
      return { success: true, escalation };
    },
  };
}
