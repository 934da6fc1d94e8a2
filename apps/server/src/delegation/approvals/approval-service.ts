import type { ToolApproval } from "@tandem/core";
import { recordAudit } from "../../audit/audit-log";
import type { DevicePrincipal, Principal, UserPrincipal } from "../../auth/principal";
import { type ApiError, conflict, notFound } from "../../http/errors";
import { newId } from "../../ids";
import { enqueueEscalationRequested } from "../../webhooks/webhook-outbox";
import { findGrant, grantNotFound, inWriteUnit, requireActiveGrant } from "../grants";
import { announceApprovalResolved, fromApproval } from "./approval-escalation";
import { type Deps, expireApproval, expireDueApprovals, expiryReason } from "./approval-expiry";
import { type ApprovalRecord, findApproval, notifyDecision, selectApprovals, toToolApproval } from "./approval-records";
import { approvalSessionHandle } from "./approval-session";
import { findMatchingPolicy } from "./tool-policies";

/** How long the owner has to answer; left alone, the approval denies. */
export const APPROVAL_TTL_MS = 5 * 60_000;

export interface ApprovalRequest {
  communicationSessionId: string;
  sessionHandle?: string;
  messageId?: string;
  toolName: string;
  toolInputSummary: string;
}

export interface ApprovalReceipt {
  approvalId: string;
  status: "auto_allow" | "pending";
  decision: "allow" | null;
  scope: "once" | null;
  expiresAt: string;
}

/**
 * The bridge whose runtime wants a tool asks here. Only the bridge the grant is frozen on (the
 * recipient's, whose machine runs the tool) may ask; the owner's policy or decision answers.
 */
export async function requestToolApproval(deps: Deps, device: DevicePrincipal, input: ApprovalRequest): Promise<ApprovalReceipt> {
  const { db, clock } = deps;
  const endpointId = device.credential.id;
  const grant = await findGrant(db, input.communicationSessionId);
  if (!grant || grant.frozen_endpoint_id !== endpointId) throw grantNotFound(input.communicationSessionId);
  const now = clock.iso();
  requireActiveGrant(grant, now);
  if (input.messageId !== undefined) {
    const message = await db
      .selectFrom("messages")
      .select("id")
      .where("id", "=", input.messageId)
      .where("grant_id", "=", grant.id)
      .executeTakeFirst();
    if (!message) throw notFound(`message ${input.messageId} on this communication session`);
  }
  const ownerId = grant.recipient_id;
  const sessionHandle = await approvalSessionHandle(db, endpointId, grant, input.sessionHandle);
  const policy = await findMatchingPolicy(
    db,
    { ownerId, toolName: input.toolName, grantId: grant.id, peerId: grant.requester_id, sessionHandle },
    now,
  );
  const approvalId = newId("apr");
  const expiresAt = clock.isoIn(APPROVAL_TTL_MS);
  await inWriteUnit(deps, undefined, async ({ tx, events }) => {
    await tx
      .insertInto("tool_approvals")
      .values({
        id: approvalId,
        owner_id: ownerId,
        endpoint_id: endpointId,
        grant_id: grant.id,
        session_handle: sessionHandle,
        message_id: input.messageId ?? null,
        tool_name: input.toolName,
        tool_input_summary: input.toolInputSummary,
        status: policy ? "auto_allow" : "pending",
        decision: policy ? "allow" : null,
        scope: policy ? "once" : null,
        policy_id: policy?.id ?? null,
        created_at: now,
        expires_at: expiresAt,
        resolved_at: policy ? now : null,
      })
      .execute();
    await recordAudit(tx, clock, {
      actor: device,
      action: policy ? "tool_approval.auto_allow" : "tool_approval.request",
      objectType: "tool_approval",
      objectId: approvalId,
      parties: [ownerId, grant.requester_id],
      detail: { toolName: input.toolName, grantId: grant.id, policyId: policy?.id ?? null },
    });
    if (!policy) {
      // The owner's apps learn of it on the owner's user stream (bridges do not know this kind).
      await events.appendToUserStream(tx, ownerId, "tool.approval_requested", {
        approvalId,
        communicationSessionId: grant.id,
        toolName: input.toolName,
        toolInputSummary: input.toolInputSummary,
        requesterPrincipalId: String(grant.requester_id),
        expiresAt,
      });
      // …and as an escalation, so one list (GET /escalations) and one event hold everything waiting.
      const escalation = fromApproval(toToolApproval((await findApproval(tx, approvalId)) as ApprovalRecord));
      if (escalation) {
        await events.appendToUserStream(tx, ownerId, "escalation.requested", { escalation });
        await enqueueEscalationRequested(tx, events, clock, ownerId, {
          escalationId: approvalId,
          runId: null,
          tool: input.toolName,
          summary: escalation.summary,
          expiresAt,
        });
      }
    }
  });
  return policy
    ? { approvalId, status: "auto_allow", decision: "allow", scope: "once", expiresAt }
    : { approvalId, status: "pending", decision: null, scope: null, expiresAt };
}

/** The owner (user key) and the bridge that asked (its device token) may see it; to anyone else it does not exist. */
function canSee(principal: Principal, record: ApprovalRecord): boolean {
  return principal.credential.kind === "api_key" ? record.owner_id === principal.userId : record.endpoint_id === principal.credential.id;
}

/** Reads one approval, expiring it first if it is due (so a poll never sees a stale pending). */
async function loadApproval(deps: Deps, principal: Principal, approvalId: string): Promise<ApprovalRecord> {
  const record = await findApproval(deps.db, approvalId);
  if (!record || !canSee(principal, record)) throw notFound(`tool approval ${approvalId}`);
  const reason = expiryReason(record, deps.clock.iso());
  if (reason === null) return record;
  await expireApproval(deps, record, reason);
  return (await findApproval(deps.db, approvalId)) as ApprovalRecord;
}

export async function getToolApproval(deps: Deps, principal: Principal, approvalId: string): Promise<ToolApproval> {
  return toToolApproval(await loadApproval(deps, principal, approvalId));
}

export async function listToolApprovals(
  deps: Deps,
  owner: UserPrincipal,
  filter: { status?: ToolApproval["status"]; limit: number },
): Promise<ToolApproval[]> {
  await expireDueApprovals(deps, owner.userId);
  let query = selectApprovals(deps.db)
    .where("a.owner_id", "=", owner.userId)
    .orderBy("a.created_at", "desc")
    .orderBy("a.id", "desc")
    .limit(filter.limit);
  if (filter.status !== undefined) query = query.where("a.status", "=", filter.status);
  return (await query.execute()).map(toToolApproval);
}

function notPending(record: ApprovalRecord): ApiError {
  return record.status === "expired"
    ? conflict("approval_expired", `Tool approval ${record.id} expired before it was resolved; it counts as a deny`)
    : conflict("approval_already_resolved", `Tool approval ${record.id} is already resolved (${record.status})`);
}

/**
 * The owner decides. `allow` with scope `session` also allows this tool on this grant and session
 * from now until the grant ends (a `session_decision` policy), so the bridge stops asking.
 */
export async function resolveToolApproval(
  deps: Deps,
  owner: UserPrincipal,
  approvalId: string,
  answer: { decision: "allow" | "deny"; scope: "once" | "session" },
): Promise<ToolApproval> {
  const { db, clock } = deps;
  const record = await loadApproval(deps, owner, approvalId);
  if (record.status !== "pending") throw notPending(record);
  const resolved = await inWriteUnit(deps, undefined, async (unit) => {
    const { tx } = unit;
    const resolvedAt = clock.iso();
    const result = await tx
      .updateTable("tool_approvals")
      .set({
        status: answer.decision === "allow" ? "allowed" : "denied",
        decision: answer.decision,
        scope: answer.scope,
        resolved_at: resolvedAt,
      })
      .where("id", "=", record.id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    // Someone (a second resolve, the sweep) got there first: nothing was written.
    if (result.numUpdatedRows === 0n) return false;
    let policyId: number | null = null;
    if (answer.decision === "allow" && answer.scope === "session") {
      const policy = await tx
        .insertInto("tool_policies")
        .values({
          owner_id: owner.userId,
          tool_name: record.tool_name,
          grant_id: record.grant_id,
          peer_id: record.requester_id,
          session_handle: record.session_handle,
          decision: "allow",
          source: "session_decision",
          created_at: resolvedAt,
          expires_at: record.grant_expires_at,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      policyId = policy.id;
      await tx.updateTable("tool_approvals").set({ policy_id: policyId }).where("id", "=", record.id).execute();
    }
    await notifyDecision(unit, record, { decision: answer.decision, scope: answer.scope, resolvedAt });
    await announceApprovalResolved(unit, clock, record.id, answer.decision === "allow" ? "continue" : "stop");
    await recordAudit(tx, clock, {
      actor: owner,
      action: "tool_approval.resolve",
      objectType: "tool_approval",
      objectId: record.id,
      parties: [owner.userId, record.requester_id],
      detail: { toolName: record.tool_name, decision: answer.decision, scope: answer.scope, policyId },
    });
    return true;
  });
  const current = (await findApproval(db, approvalId)) as ApprovalRecord;
  if (!resolved) throw notPending(current);
  return toToolApproval(current);
}
