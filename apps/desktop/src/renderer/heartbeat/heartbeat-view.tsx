import { useEffect } from "react";
import type { DesktopApi, HeartbeatOverview, HeartbeatRunDetail } from "../../shared/desktop-api";
import { AgentOfflineNotice } from "../agent/agent-offline-notice";
import { useNow } from "../approvals/use-now";
import { ErrorNotice } from "../components/error-notice";
import { openLink } from "../components/open-link";
import { fullTime } from "../notes/note-time";
import { ChecklistEditor } from "./checklist-editor";
import { durationWords, scheduleWords, TIER_WORDS } from "./heartbeat-format";
import { useHeartbeatSession } from "./heartbeat-session";
import { HeartbeatSettingsForm } from "./heartbeat-settings";
import { RunDetails } from "./run-details";
import { RunHistory } from "./run-history";
import "./heartbeat.css";

/**
 * The Heartbeat section: the agent's periodic pass, which the server runs. How it is going and
 * Run now (or a dry run) on top; what it may do, when it runs and its checklist on the left; the
 * runs with their actions on the right.
 */
export function HeartbeatView({ api, onOpenConversation }: { api: DesktopApi; onOpenConversation: (conversationId: number) => void }) {
  const heartbeat = useHeartbeatSession();
  const { attach } = heartbeat;
  useEffect(() => attach(), [attach]);
  const onOpenLink = (href: string) => void openLink(api, href);
  const overview = heartbeat.overview.status === "ready" ? heartbeat.overview.value : null;

  return (
    <div className="heartbeat-view">
      <p className="hint heartbeat-intro">
        Now and then your agent reads your checklist, looks at your notes and todos, and sends you one message in its Heartbeat
        conversation.
      </p>
      {heartbeat.offline && (
        <AgentOfflineNotice detail="Your settings and checklist stay here as you left them; save them, or run the heartbeat, once the server is back." />
      )}
      {heartbeat.overview.status === "failed" && !heartbeat.offline && (
        <ErrorNotice message={`The heartbeat could not be loaded: ${heartbeat.overview.message}`} onRetry={heartbeat.reload} />
      )}
      <section className="heartbeat-run" aria-label="Run the heartbeat">
        {overview ? (
          <OverviewLine overview={overview} />
        ) : (
          heartbeat.overview.status !== "failed" && <p className="empty-state">Loading…</p>
        )}
        <div className="heartbeat-toolbar">
          <button
            type="button"
            className="primary"
            disabled={heartbeat.running !== null || heartbeat.offline}
            onClick={() => heartbeat.run(false)}
          >
            Run now
          </button>
          <button
            type="button"
            disabled={heartbeat.running !== null || heartbeat.offline}
            title="Runs the pass without writing or sending anything, and says what it would do"
            onClick={() => heartbeat.run(true)}
          >
            Dry run
          </button>
          {heartbeat.running && <RunningProgress dryRun={heartbeat.running.dryRun} since={heartbeat.running.since} />}
        </div>
        {heartbeat.runError && <ErrorNotice message={`The heartbeat did not run: ${heartbeat.runError}`} />}
        {heartbeat.lastResult && (
          <RunResult result={heartbeat.lastResult} onOpenLink={onOpenLink} onOpenConversation={onOpenConversation} />
        )}
      </section>
      <div className="heartbeat-columns">
        <div className="heartbeat-setup">
          <HeartbeatSettingsForm />
          <ChecklistEditor />
        </div>
        <RunHistory api={api} offline={heartbeat.offline} generation={heartbeat.runsGeneration} onOpenLink={onOpenLink} />
      </div>
    </div>
  );
}

function OverviewLine({ overview }: { overview: HeartbeatOverview }) {
  const { lastRun } = overview;
  return (
    <p className="heartbeat-overview" data-testid="heartbeat-overview">
      <span>{TIER_WORDS[overview.settings.tier].title}.</span> <span>{scheduleWords(overview.settings)}</span>{" "}
      {overview.nextRunAt && <span>Next run {fullTime(overview.nextRunAt)}.</span>}{" "}
      <span>
        {lastRun ? `Last run ${fullTime(lastRun.startedAt)}` : "No run yet"} · {overview.runsToday} today
      </span>
    </p>
  );
}

function RunningProgress({ dryRun, since }: { dryRun: boolean; since: number }) {
  const now = useNow();
  const seconds = Math.max(0, Math.floor((now - since) / 1000));
  return (
    <span className="heartbeat-progress" role="status">
      {dryRun ? "Trying a dry run…" : "Running the heartbeat…"}
      {seconds >= 2 ? ` ${seconds} s` : ""}
    </span>
  );
}

/** What the run asked for here did, in a sentence, then its message and actions. */
function RunResult({
  result,
  onOpenLink,
  onOpenConversation,
}: {
  result: HeartbeatRunDetail;
  onOpenLink: (href: string) => void;
  onOpenConversation: (conversationId: number) => void;
}) {
  const { conversationId } = result;
  return (
    <section className="run-result" aria-label="Last result" data-status={result.status}>
      <p className="run-result-headline" role="status">
        {resultHeadline(result)}
        {result.elapsedMs !== null && <span className="hint"> It took {durationWords(result.elapsedMs)}.</span>}
        {result.delivered && conversationId !== null && (
          <button type="button" className="link-button" onClick={() => onOpenConversation(conversationId)}>
            Open the conversation
          </button>
        )}
      </p>
      <RunDetails run={result} onOpenLink={onOpenLink} />
    </section>
  );
}

function resultHeadline(result: HeartbeatRunDetail): string {
  if (result.status === "failed") return "The run failed.";
  if (result.status === "requires_action")
    return "Paused: it wants to use a tool you asked to decide on, and waits for your Continue or Stop.";
  if (result.dryRun) return "Dry run: nothing was written or sent. Here is what it would do.";
  if (result.delivered) return "Done: the message is in your Heartbeat conversation.";
  if (result.suppressed) return "Done, but nothing was sent: the message nearly repeats one from the last 24 hours.";
  return "Done: nothing to send.";
}
