import type { ApprovalItem } from "../../shared/desktop-api";
import { personLabel } from "../../shared/person-label";
import { timeLeft } from "./time-left";

export type ToolCallDecision = "allow-once" | "allow-session" | "deny";

/** What each button asks the host to send to the server. */
export const RESOLUTIONS: Readonly<Record<ToolCallDecision, { decision: "allow" | "deny"; scope?: "once" | "session" }>> = {
  "allow-once": { decision: "allow", scope: "once" },
  "allow-session": { decision: "allow", scope: "session" },
  deny: { decision: "deny" },
};

interface ToolCallCardProps {
  readonly approval: ApprovalItem;
  readonly now: number;
  /** The decision being sent for this card, if any. */
  readonly sending: ToolCallDecision | null;
  /** Another decision is in flight: one at a time. */
  readonly busy: boolean;
  onDecide(decision: ToolCallDecision): void;
}

const DECISION_BUTTONS: readonly { decision: ToolCallDecision; label: string; className: string; hint(tool: string): string }[] = [
  { decision: "allow-once", label: "Allow once", className: "approval-allow", hint: (tool) => `Run ${tool} this once` },
  {
    decision: "allow-session",
    label: "Allow for session",
    className: "approval-allow-session",
    hint: (tool) => `Run ${tool} now and, for the rest of this grant, without asking`,
  },
  { decision: "deny", label: "Deny", className: "approval-deny", hint: (tool) => `Do not run ${tool}` },
];

/**
 * One tool call waiting for the owner. Everything but the buttons comes from the runtime serving
 * another person's request, so it is rendered as text only (React escapes it; never HTML).
 */
export function ToolCallCard({ approval, now, sending, busy, onDecide }: ToolCallCardProps) {
  const requester = personLabel(approval.requesterName, approval.requesterPrincipalId);
  const titleId = `tool-call-${approval.approvalId}`;
  return (
    <article className="approval-card" aria-labelledby={titleId}>
      <header className="approval-card-header">
        <h4 id={titleId} className="approval-tool-name">
          {approval.toolName}
        </h4>
        <span className="approval-expiry" title={`Denied automatically at ${approval.expiresAt}`}>
          Expires in <time dateTime={approval.expiresAt}>{timeLeft(approval.expiresAt, now)}</time>
        </span>
      </header>
      <p className="approval-requester">
        Asked while serving <strong>{requester}</strong>
      </p>
      <pre className="approval-summary">{approval.toolInputSummary || "(no details given)"}</pre>
      <div className="approval-actions">
        {DECISION_BUTTONS.map(({ decision, label, className, hint }) => (
          <button
            key={decision}
            type="button"
            className={className}
            title={hint(approval.toolName)}
            disabled={busy}
            aria-busy={sending === decision}
            onClick={() => onDecide(decision)}
          >
            {label}
          </button>
        ))}
      </div>
    </article>
  );
}
