import type { ToolApproval } from "@tandem/core";
import type { Kysely } from "kysely";
import type { GrantStatus, Schema } from "../../db/schema";
import { currentGrantStatus, type GrantRecord, type WriteUnit } from "../grants";

/** The approval with what it needs of its grant: who asked, and whether the grant still stands. */
export function selectApprovals(db: Kysely<Schema>) {
  return db
    .selectFrom("tool_approvals as a")
    .leftJoin("grants as g", "g.id", "a.grant_id")
    .selectAll("a")
    .select(["g.requester_id", "g.status as grant_status", "g.request_expires_at", "g.grant_expires_at"]);
}

export type ApprovalRecord = NonNullable<Awaited<ReturnType<ReturnType<typeof selectApprovals>["executeTakeFirst"]>>>;

export async function findApproval(db: Kysely<Schema>, id: string): Promise<ApprovalRecord | undefined> {
  return selectApprovals(db).where("a.id", "=", id).executeTakeFirst();
}

/** How an approval ended, as the bridge that asked hears it (`reason` only when it expired). */
export interface DecisionNotice {
  decision: NonNullable<ToolApproval["decision"]>;
  scope: ToolApproval["scope"];
  resolvedAt: string;
  reason?: string;
}

/** Tells the bridge that asked: `tool.approval_decision` on its endpoint's stream. */
export async function notifyDecision(
  { tx, events }: WriteUnit,
  approval: Pick<ApprovalRecord, "id" | "endpoint_id" | "grant_id" | "tool_name">,
  decision: DecisionNotice,
): Promise<void> {
  await events.append(tx, approval.endpoint_id, "tool.approval_decision", {
    approvalId: approval.id,
    communicationSessionId: approval.grant_id,
    toolName: approval.tool_name,
    ...decision,
  });
}

export function toToolApproval(row: ApprovalRecord): ToolApproval {
  return {
    approvalId: row.id,
    status: row.status,
    decision: row.decision,
    scope: row.scope,
    toolName: row.tool_name,
    toolInputSummary: row.tool_input_summary,
    communicationSessionId: row.grant_id,
    requesterPrincipalId: row.requester_id === null ? "" : String(row.requester_id),
    endpointId: row.endpoint_id,
    sessionHandle: row.session_handle,
    messageId: row.message_id,
    policyId: row.policy_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    resolvedAt: row.resolved_at,
  };
}

/** The approval's grant's status now (counting an expiry no sweep has recorded yet); null if the grant is gone. */
export function grantStatusOf(record: ApprovalRecord, nowIso: string): GrantStatus | null {
  if (record.grant_status === null || record.request_expires_at === null) return null;
  // currentGrantStatus reads only these three fields of the grant.
  const grant = { status: record.grant_status, request_expires_at: record.request_expires_at, grant_expires_at: record.grant_expires_at };
  return currentGrantStatus(grant as GrantRecord, nowIso);
}
