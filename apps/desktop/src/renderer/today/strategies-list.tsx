import type { Strategy } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import type { Loaded } from "./briefing-session";

const URGENCY: Record<string, string> = { critical: "Critical", high: "High", medium: "Medium", low: "Low" };

/** The top next steps the server drew from the briefing, most important first. */
export function StrategiesList({ strategies, onRetry }: { strategies: Loaded<readonly Strategy[]>; onRetry: () => void }) {
  return (
    <section className="strategies" aria-label="Next steps">
      <h3>Next steps</h3>
      {(strategies.status === "idle" || strategies.status === "loading") && <p className="empty-state">Working out what matters most…</p>}
      {strategies.status === "failed" && <ErrorNotice message={strategies.message} onRetry={onRetry} />}
      {strategies.status === "ready" && strategies.value.length === 0 && <p className="empty-state">Nothing pressing.</p>}
      {strategies.status === "ready" && strategies.value.length > 0 && (
        <ol>
          {[...strategies.value]
            .sort((a, b) => a.priority - b.priority)
            .map((strategy) => (
              <li key={`${strategy.priority}:${strategy.title}`}>
                <div className="strategy-head">
                  <strong dir="auto">{strategy.title}</strong>
                  <span className="strategy-tag" data-urgency={strategy.urgencyLevel}>
                    {URGENCY[strategy.urgencyLevel] ?? strategy.urgencyLevel}
                  </span>
                  <span className="strategy-tag">{strategy.category}</span>
                </div>
                {strategy.description && <p dir="auto">{strategy.description}</p>}
                {strategy.action && (
                  <p className="strategy-action" dir="auto">
                    Next: {strategy.action}
                  </p>
                )}
              </li>
            ))}
        </ol>
      )}
    </section>
  );
}
