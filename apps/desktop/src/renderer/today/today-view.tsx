import { useEffect, useMemo } from "react";
import type { Briefing, DesktopApi } from "../../shared/desktop-api";
import { AgentOfflineNotice } from "../agent/agent-offline-notice";
import { useNow } from "../approvals/use-now";
import { ErrorNotice } from "../components/error-notice";
import { openLink } from "../components/open-link";
import { fullTime } from "../notes/note-time";
import { parseHtml } from "../rich-text/html";
import { RichText } from "../rich-text/rich-text";
import { useBriefingSession } from "./briefing-session";
import { PriorityMatrixView } from "./priority-matrix";
import { StrategiesList } from "./strategies-list";
import "./today.css";

/** The five sections of a briefing, in the order the page shows them. */
const SECTIONS: readonly { readonly field: keyof Briefing & `${string}Summary`; readonly title: string }[] = [
  { field: "statusQuoSummary", title: "Where things stand" },
  { field: "todoSummary", title: "Todos" },
  { field: "calendarSummary", title: "Calendar" },
  { field: "notesSummary", title: "Notes" },
  { field: "emailAttentionSummary", title: "Email needing attention" },
];

/**
 * The Today section: the newest briefing the server wrote (from the todos due and the notes that
 * changed lately), what to do next, and the same items placed by urgency and importance.
 */
export function TodayView({ api }: { api: DesktopApi }) {
  const today = useBriefingSession();
  const { attach } = today;
  useEffect(() => attach(), [attach]);
  const onOpenLink = (href: string) => void openLink(api, href);
  const briefing = today.briefing.status === "ready" ? today.briefing.value : null;

  return (
    <div className="today-view">
      <div className="today-toolbar">
        <button type="button" className="primary" disabled={today.writingSince !== null || today.offline} onClick={today.write}>
          New briefing
        </button>
        {today.writingSince !== null && <WritingProgress since={today.writingSince} />}
        {briefing && (
          <span className="today-generated">
            Written {fullTime(briefing.generatedAt)} · notes changed in the {briefing.timeDuration}
          </span>
        )}
      </div>
      {today.offline && <AgentOfflineNotice detail="The last briefing stays here; a new one can be written once the server is back." />}
      {today.writeError && (
        <ErrorNotice message={`The briefing could not be written: ${today.writeError}`} onRetry={today.offline ? undefined : today.write} />
      )}
      {(today.briefing.status === "idle" || today.briefing.status === "loading") && (
        <p className="empty-state">Loading the latest briefing…</p>
      )}
      {today.briefing.status === "failed" && !today.offline && <ErrorNotice message={today.briefing.message} onRetry={today.reload} />}
      {today.briefing.status === "ready" && briefing === null && (
        <p className="empty-state today-empty">
          No briefing yet. <strong>New briefing</strong> writes one from your todos due today and the notes you changed lately.
        </p>
      )}
      {briefing && <BriefingBody briefing={briefing} onOpenLink={onOpenLink} />}
    </div>
  );
}

function WritingProgress({ since }: { since: number }) {
  const now = useNow();
  const seconds = Math.max(0, Math.floor((now - since) / 1000));
  return (
    <span className="today-progress" role="status">
      Writing your briefing…{seconds >= 2 ? ` ${seconds} s` : ""}
    </span>
  );
}

function BriefingBody({ briefing, onOpenLink }: { briefing: Briefing; onOpenLink: (href: string) => void }) {
  const today = useBriefingSession();
  // Parsed once per briefing: the HTML comes from the server and is read through the allow-list.
  const sections = useMemo(() => SECTIONS.map((section) => ({ ...section, blocks: parseHtml(briefing[section.field] ?? "") })), [briefing]);
  return (
    <div className="briefing">
      <div className="briefing-sections">
        {sections.map((section) => (
          <section key={section.field} className="briefing-section" aria-label={section.title}>
            <h3>{section.title}</h3>
            {section.blocks.length > 0 ? (
              <RichText blocks={section.blocks} onOpenLink={onOpenLink} />
            ) : (
              <p className="empty-state">Nothing here.</p>
            )}
          </section>
        ))}
      </div>
      {briefing.suggestions.length > 0 && (
        <section className="briefing-suggestions" aria-label="Suggestions">
          <h3>Suggestions</h3>
          <ul>
            {briefing.suggestions.map((suggestion) => (
              <li key={suggestion.suggestionId}>
                <strong dir="auto">{suggestion.title}</strong>
                {suggestion.description && <span dir="auto"> · {suggestion.description}</span>}
                {suggestion.action && (
                  <span className="suggestion-action" dir="auto">
                    {suggestion.action}
                  </span>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      <div className="briefing-insights">
        <StrategiesList strategies={today.strategies} onRetry={today.retryInsights} />
        <PriorityMatrixView matrix={today.matrix} onRetry={today.retryInsights} />
      </div>
    </div>
  );
}
