import type { Escalation, ToolApproval } from "@tandem/core";
import type { Clock } from "../../clock";
import { enqueueEscalationResolved } from "../../webhooks/webhook-outbox";
import type { WriteUnit } from "../grants";
import { type ApprovalRecord, findApproval, toToolApproval } from "./approval-records";

// A bridge's tool approval that waits for the owner (no decision, no policy) is an escalation in the
// owner's list too (GET /escalations), read from `tool_approvals` as it is: allowed is continued,
// denied stopped, expired expired.

const BRIDGE_STATUS = { pending: "pending", allowed: "continued", denied: "stopped", expired: "expired" } as const;

/** A bridge approval as the owner's escalation list shows it (auto-allowed ones never waited: null). */
export function fromApproval(approval: ToolApproval): Escalation | null {
  if (approval.status === "auto_allow") return null;
  return {
    id: approval.approvalId,
    kind: "tool_call",
    source: { type: "bridge", id: approval.communicationSessionId },
    runId: null,
    toolName: approval.toolName,
    summary: `Your machine's agent wants to run ${approval.toolName} for a peer: ${approval.toolInputSummary}`,
    consequence: `Continue allows ${approval.toolName} this once on your machine; stop denies it.`,
    argumentsHash: "",
    status: BRIDGE_STATUS[approval.status],
    createdAt: approval.createdAt,
    expiresAt: approval.expiresAt,
    decidedAt: approval.resolvedAt,
    decidedBy: approval.resolvedAt === null ? null : approval.status === "expired" ? "expiry" : "owner",
  };
}

/**
 * `escalation.resolved` for an approval that was waiting for its owner, on the owner's stream and
 * by webhook, in the transaction that decided (or expired) it.
 */
export async function announceApprovalResolved(
  { tx, events }: WriteUnit,
  clock: Clock,
  approvalId: string,
  decision: "continue" | "stop" | "expired",
): Promise<void> {
  const record = (await findApproval(tx, approvalId)) as ApprovalRecord;
  const escalation = fromApproval(toToolApproval(record));
  if (!escalation) return;
  await events.appendToUserStream(tx, Number(record.owner_id), "escalation.resolved", { escalation });
  await enqueueEscalationResolved(tx, events, clock, Number(record.owner_id), {
    escalationId: approvalId,
    decision,
    resolvedAt: record.resolved_at ?? clock.iso(),
  });
}
