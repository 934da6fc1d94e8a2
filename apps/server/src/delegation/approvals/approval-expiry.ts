import { recordAudit } from "../../audit/audit-log";
import type { Clock } from "../../clock";
import type { AppContext } from "../../context";
import { type GrantEndHook, inactiveGrantReason, inWriteUnit, type WriteUnit } from "../grants";
import { announceApprovalResolved } from "./approval-escalation";
import { type ApprovalRecord, grantStatusOf, notifyDecision, selectApprovals } from "./approval-records";

/** What the approval services use of the context. */
export type Deps = Pick<AppContext, "db" | "clock" | "realtime">;

/** What expiring an approval needs to know about it. */
type ExpiringApproval = Pick<ApprovalRecord, "id" | "owner_id" | "endpoint_id" | "grant_id" | "tool_name" | "requester_id">;

/** Why a pending approval can no longer be allowed: its 5 minutes are up, or its grant ended. */
export function expiryReason(record: ApprovalRecord, nowIso: string): string | null {
  if (record.status !== "pending") return null;
  if (record.expires_at <= nowIso) return "expired";
  const status = grantStatusOf(record, nowIso);
  if (status === "active") return null;
  return status === null ? "communication_session_not_active" : inactiveGrantReason(status);
}

/**
 * A pending approval left alone denies: it becomes `expired` with decision `deny`, and the bridge
 * that asked hears so on its stream. The update is conditional, so a concurrent resolve or a
 * second sweep changes nothing twice. Answers whether this call expired it.
 */
async function expireInUnit(unit: WriteUnit, clock: Clock, approval: ExpiringApproval, reason: string): Promise<boolean> {
  const { tx } = unit;
  const resolvedAt = clock.iso();
  const result = await tx
    .updateTable("tool_approvals")
    .set({ status: "expired", decision: "deny", scope: null, resolved_at: resolvedAt })
    .where("id", "=", approval.id)
    .where("status", "=", "pending")
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  await notifyDecision(unit, approval, { decision: "deny", scope: null, resolvedAt, reason });
  await announceApprovalResolved(unit, clock, approval.id, "expired");
  await recordAudit(tx, clock, {
    actor: "system",
    action: "tool_approval.expire",
    objectType: "tool_approval",
    objectId: approval.id,
    parties: [approval.owner_id, approval.requester_id],
    detail: { toolName: approval.tool_name, grantId: approval.grant_id, reason },
  });
  return true;
}

/** Expires one approval in a transaction of its own, publishing its event after commit. */
export async function expireApproval(deps: Deps, approval: ExpiringApproval, reason: string): Promise<boolean> {
  return inWriteUnit(deps, undefined, (unit) => expireInUnit(unit, deps.clock, approval, reason));
}

/**
 * Expires every due pending approval (of one owner, or all): the maintenance sweep, and the lazy
 * check before an owner's listing. Answers how many it expired.
 */
export async function expireDueApprovals(deps: Deps, ownerId?: number): Promise<number> {
  const now = deps.clock.iso();
  let query = selectApprovals(deps.db)
    .where("a.status", "=", "pending")
    .where((eb) =>
      eb.or([eb("a.expires_at", "<=", now), eb("g.id", "is", null), eb("g.status", "!=", "active"), eb("g.grant_expires_at", "<=", now)]),
    )
    .orderBy("a.created_at");
  if (ownerId !== undefined) query = query.where("a.owner_id", "=", ownerId);
  let count = 0;
  for (const record of await query.execute()) {
    const reason = expiryReason(record, now);
    if (reason !== null && (await expireApproval(deps, record, reason))) count++;
  }
  return count;
}

/**
 * A grant that ends takes its pending approvals with it, in the same commit: nothing asked under
 * a revoked or expired grant can be allowed afterwards.
 */
export const expireApprovalsOfEndedGrant: GrantEndHook = async (context, unit, { grant, status }) => {
  const pending = await unit.tx
    .selectFrom("tool_approvals")
    .select(["id", "owner_id", "endpoint_id", "grant_id", "tool_name"])
    .where("grant_id", "=", grant.id)
    .where("status", "=", "pending")
    .execute();
  for (const approval of pending) {
    await expireInUnit(unit, context.clock, { ...approval, requester_id: grant.requester_id }, inactiveGrantReason(status));
  }
};
