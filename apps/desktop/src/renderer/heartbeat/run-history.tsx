import { useCallback, useEffect, useRef, useState } from "react";
import type { DesktopApi, HeartbeatRunDetail, HeartbeatRunItem } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { usePolled } from "../components/use-polled";
import { fullTime } from "../notes/note-time";
import type { Loaded } from "../today/briefing-session";
import { runOutcome, sourceWords, TIER_WORDS } from "./heartbeat-format";
import { RunDetails } from "./run-details";

/** Scheduled runs are minutes apart at the least; a run asked for here refreshes at once. */
const RUNS_POLL_MS = 30_000;

/**
 * The newest runs, newest first; each opens to its message and actions (asked for when opened).
 * Asked for while the view is on screen, after a run (`generation`), and every 30 s; offline, the
 * last list stays and nothing is asked.
 */
export function RunHistory({
  api,
  offline,
  generation,
  onOpenLink,
}: {
  api: DesktopApi;
  offline: boolean;
  generation: number;
  onOpenLink: (href: string) => void;
}) {
  const offlineRef = useRef(offline);
  offlineRef.current = offline;
  const runs = usePolled(async () => {
    if (offlineRef.current) throw new Error("offline");
    return api.listHeartbeatRuns();
  }, RUNS_POLL_MS);
  const { refresh } = runs;
  const seen = useRef(generation);
  const [details, setDetails] = useState<ReadonlyMap<number, Loaded<HeartbeatRunDetail>>>(new Map());
  const [open, setOpen] = useState<number | null>(null);

  const loadDetail = useCallback(
    (runId: number) => {
      setDetails((current) => new Map(current).set(runId, { status: "loading" }));
      api.getHeartbeatRun({ runId }).then(
        (value) => setDetails((current) => new Map(current).set(runId, { status: "ready", value })),
        (error: unknown) => setDetails((current) => new Map(current).set(runId, { status: "failed", message: errorMessage(error) })),
      );
    },
    [api],
  );

  // A run ended: the list, and the runs still open that were running, are worth asking for again.
  useEffect(() => {
    if (seen.current === generation) return;
    seen.current = generation;
    refresh();
  }, [generation, refresh]);
  // Back online: the list at once.
  const wasOffline = useRef(offline);
  useEffect(() => {
    if (wasOffline.current && !offline) refresh();
    wasOffline.current = offline;
  }, [offline, refresh]);

  const toggle = (run: HeartbeatRunItem) => {
    if (open === run.runId) {
      setOpen(null);
      return;
    }
    setOpen(run.runId);
    const known = details.get(run.runId);
    // A run still running then had no final actions: ask again.
    if (!known || known.status === "failed" || (known.status === "ready" && known.value.status === "running")) loadDetail(run.runId);
  };

  return (
    <section className="run-history" aria-labelledby="run-history-heading">
      <h3 id="run-history-heading">History</h3>
      {runs.error && !offline && <p className="load-error">Could not load the runs: {runs.error}</p>}
      {runs.data === undefined && !runs.error && <p className="empty-state">Loading…</p>}
      {runs.data?.length === 0 && <p className="empty-state">No runs yet. Run now, or set a schedule.</p>}
      {runs.data && runs.data.length > 0 && (
        <ul className="run-list">
          {runs.data.map((run) => {
            const expanded = open === run.runId;
            const detail = details.get(run.runId);
            return (
              <li key={run.runId} className="run-row" data-status={run.status}>
                <button
                  type="button"
                  className="run-summary"
                  aria-expanded={expanded}
                  aria-controls={`run-${run.runId}`}
                  onClick={() => toggle(run)}
                >
                  <span className="run-line">
                    <time dateTime={run.startedAt}>{fullTime(run.startedAt)}</time>
                    <span className="tag">{sourceWords(run)}</span>
                    {run.dryRun && <span className="tag">Dry run</span>}
                    <span className="tag">{TIER_WORDS[run.tier].title}</span>
                    <span className="run-outcome" data-outcome={run.status === "failed" ? "failed" : run.delivered ? "sent" : "quiet"}>
                      {runOutcome(run)}
                    </span>
                  </span>
                  {run.summary && (
                    <span className="run-summary-text" dir="auto">
                      {run.summary}
                    </span>
                  )}
                </button>
                {expanded && (
                  <div id={`run-${run.runId}`} className="run-expanded">
                    {(detail === undefined || detail.status === "loading" || detail.status === "idle") && (
                      <p className="empty-state">Loading the run…</p>
                    )}
                    {detail?.status === "failed" && <ErrorNotice message={detail.message} onRetry={() => loadDetail(run.runId)} />}
                    {detail?.status === "ready" && <RunDetails run={detail.value} onOpenLink={onOpenLink} />}
                  </div>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
