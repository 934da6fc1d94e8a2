import type { Escalation, ToolApproval } from "@tandem/core";

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
