import type { EscalationItem } from "../../shared/desktop-api";
import { timeLeft } from "./time-left";

export type EscalationDecision = "continue" | "stop";

interface EscalationCardProps {
  readonly escalation: EscalationItem;
  readonly now: number;
  /** The decision being sent for this card, if any. */
  readonly sending: EscalationDecision | null;
  /** Another decision is in flight: one at a time. */
  readonly busy: boolean;
  onDecide(decision: EscalationDecision): void;
}

/**
 * One agent action paused for the owner (an escalation): who asks, what it would do and what
 * continuing means, with Continue (run exactly the recorded call, once) and Stop (the agent is
 * told it was stopped by its owner). The summary holds the model's arguments: text only.
 */
export function EscalationCard({ escalation, now, sending, busy, onDecide }: EscalationCardProps) {
  const titleId = `escalation-${escalation.id}`;
  return (
    <article className="approval-card" aria-labelledby={titleId} data-escalation={escalation.id}>
      <header className="approval-card-header">
        <h4 id={titleId} className="approval-tool-name">
          {escalation.toolName}
        </h4>
        <span className="approval-expiry" title={`Stopped automatically at ${escalation.expiresAt}`}>
          Expires in <time dateTime={escalation.expiresAt}>{timeLeft(escalation.expiresAt, now)}</time>
        </span>
      </header>
      <p className="approval-requester">
        Asked by <strong>{escalation.sourceWords}</strong>
      </p>
      <pre className="approval-summary">{escalation.summary}</pre>
      {escalation.consequence && <p className="hint">{escalation.consequence}</p>}
      <div className="approval-actions">
        <button
          type="button"
          className="approval-allow"
          title={`Run ${escalation.toolName} once with exactly these arguments, and let the run go on`}
          disabled={busy}
          aria-busy={sending === "continue"}
          onClick={() => onDecide("continue")}
        >
          Continue
        </button>
        <button
          type="button"
          className="approval-deny"
          title={`Do not run ${escalation.toolName}; the agent is told you stopped it`}
          disabled={busy}
          aria-busy={sending === "stop"}
          onClick={() => onDecide("stop")}
        >
          Stop
        </button>
      </div>
    </article>
  );
}
