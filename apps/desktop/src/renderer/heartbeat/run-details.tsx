import { parseMarkdown } from "@tandem/core/rich-text";
import { useMemo } from "react";
import type { HeartbeatRunDetail } from "../../shared/desktop-api";
import { RichText } from "../rich-text/rich-text";
import { ACTION_STATUS_WORDS, actionWords } from "./heartbeat-format";

/**
 * A run's message and its actions. Both come from the model, which read the owner's notes: the
 * message is Markdown read into the closed model (no HTML), the actions' arguments and answers are
 * shown as text.
 */
export function RunDetails({ run, onOpenLink }: { run: HeartbeatRunDetail; onOpenLink: (href: string) => void }) {
  const blocks = useMemo(() => parseMarkdown(run.text), [run.text]);
  return (
    <div className="run-details">
      {run.error && <p className="run-error">Why it failed: {run.error}</p>}
      {run.suppressed && run.suppressReason && <p className="run-note">Not sent: {run.suppressReason}</p>}
      {run.text.trim() !== "" && (
        <section className="run-message" aria-label={run.dryRun ? "The message it would send" : "The message"}>
          <p className="run-label">
            {run.dryRun ? "The message it would send" : run.delivered ? "The message it sent" : "The message it wrote"}
          </p>
          <RichText blocks={blocks} onOpenLink={onOpenLink} />
        </section>
      )}
      <ActionList run={run} />
    </div>
  );
}

function ActionList({ run }: { run: HeartbeatRunDetail }) {
  const { actions, dryRun } = run;
  if (actions.length === 0) return <p className="empty-state">No actions recorded.</p>;
  return (
    <div className="run-actions">
      <p className="run-label">{dryRun ? "What it did and would do (a dry run writes nothing)" : "What it did"}</p>
      <ol className="action-list" aria-label="Actions">
        {actions.map((action) => (
          <li key={action.actionId} className="action-item" data-status={action.status} data-mode={action.mode}>
            <div className="action-head">
              <span className="action-label" title={action.type}>
                {actionWords(action, run)}
              </span>
              <span className="action-type">{action.type}</span>
              <span className="action-status">{ACTION_STATUS_WORDS[action.status]}</span>
              {action.mode === "action" && <span className="tag">Write</span>}
            </div>
            {(action.payload !== "" || action.result !== "") && (
              <details className="action-data">
                <summary>Details</summary>
                {action.payload !== "" && (
                  <>
                    <p className="run-label">Asked with</p>
                    <pre dir="auto">{action.payload}</pre>
                  </>
                )}
                {action.result !== "" && (
                  <>
                    <p className="run-label">Answer</p>
                    <pre dir="auto">{action.result}</pre>
                  </>
                )}
              </details>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}
