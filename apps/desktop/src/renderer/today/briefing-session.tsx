import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import type { Briefing, BriefingSummaries, DesktopApi, PriorityMatrix, Strategy } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { useHostStatus } from "../layout/host-status";

export type Loaded<T> =
  | { readonly status: "idle" | "loading" }
  | { readonly status: "ready"; readonly value: T }
  | { readonly status: "failed"; readonly message: string };

export interface BriefingSession {
  /** The newest briefing (null: none written yet). */
  readonly briefing: Loaded<Briefing | null>;
  readonly strategies: Loaded<readonly Strategy[]>;
  readonly matrix: Loaded<PriorityMatrix>;
  /** When the briefing being written was asked for (ms since the epoch), or null. */
  readonly writingSince: number | null;
  readonly writeError: string | null;
  readonly offline: boolean;
  /**
   * The Today view is on screen while attached: the newest briefing is loaded the first time (and
   * again after a failure), and only then is anything reloaded by itself. Answers the detach.
   */
  attach(): () => void;
  /** Asks for the newest briefing again (after a failure). */
  reload(): void;
  write(): void;
  /** Asks for the strategies and the matrix again (after a failure). */
  retryInsights(): void;
}

const BriefingContext = createContext<BriefingSession | null>(null);

function summariesOf(briefing: Briefing): BriefingSummaries {
  const { statusQuoSummary, todoSummary, calendarSummary, notesSummary, emailAttentionSummary } = briefing;
  return { statusQuoSummary, todoSummary, calendarSummary, notesSummary, emailAttentionSummary };
}

/**
 * The Today section's state, kept above the sections: a briefing being written goes on while the
 * owner is elsewhere, and the strategies and matrix are asked for once per briefing (a model may
 * write them). Everything here is the server's; offline, the last answers stay on screen.
 */
export function BriefingSessionProvider({ api, children }: { api: DesktopApi; children: ReactNode }) {
  const offline = useHostStatus().status?.sync.state === "offline";
  const [briefing, setBriefing] = useState<Loaded<Briefing | null>>({ status: "idle" });
  const [strategies, setStrategies] = useState<Loaded<readonly Strategy[]>>({ status: "idle" });
  const [matrix, setMatrix] = useState<Loaded<PriorityMatrix>>({ status: "idle" });
  const [writingSince, setWritingSince] = useState<number | null>(null);
  const [writeError, setWriteError] = useState<string | null>(null);
  const briefingRef = useRef(briefing);
  briefingRef.current = briefing;
  const offlineRef = useRef(offline);
  offlineRef.current = offline;
  const insightsFor = useRef<number | null>(null);
  const writing = useRef(false);

  const load = useCallback(() => {
    setBriefing({ status: "loading" });
    api.latestBriefing().then(
      (value) => setBriefing((current) => (current.status === "loading" ? { status: "ready", value } : current)),
      (error: unknown) =>
        setBriefing((current) => (current.status === "loading" ? { status: "failed", message: errorMessage(error) } : current)),
    );
  }, [api]);

  // Offline, asking would only fail: it is asked for once the server is back.
  const visible = useRef(false);
  const attach = useCallback(() => {
    visible.current = true;
    const status = briefingRef.current.status;
    if ((status === "idle" || status === "failed") && !offlineRef.current) load();
    return () => {
      visible.current = false;
    };
  }, [load]);

  const loadInsights = useCallback(
    (target: Briefing) => {
      insightsFor.current = target.briefingId;
      const summaries = summariesOf(target);
      const current = () => insightsFor.current === target.briefingId;
      setStrategies({ status: "loading" });
      setMatrix({ status: "loading" });
      api.briefingStrategies(summaries).then(
        (value) => current() && setStrategies({ status: "ready", value }),
        (error: unknown) => current() && setStrategies({ status: "failed", message: errorMessage(error) }),
      );
      api.briefingMatrix(summaries).then(
        (value) => current() && setMatrix({ status: "ready", value }),
        (error: unknown) => current() && setMatrix({ status: "failed", message: errorMessage(error) }),
      );
    },
    [api],
  );

  // Each briefing's strategies and matrix, once.
  const shown = briefing.status === "ready" ? briefing.value : null;
  useEffect(() => {
    if (shown && insightsFor.current !== shown.briefingId) loadInsights(shown);
  }, [shown, loadInsights]);

  const retryInsights = useCallback(() => {
    const current = briefingRef.current;
    if (current.status === "ready" && current.value) loadInsights(current.value);
  }, [loadInsights]);

  // Back online: what failed offline is worth asking again.
  const wasOffline = useRef(offline);
  useEffect(() => {
    if (wasOffline.current && !offline && visible.current) {
      const status = briefingRef.current.status;
      if (status === "failed" || status === "idle") load();
      else if (strategies.status === "failed" || matrix.status === "failed") retryInsights();
    }
    wasOffline.current = offline;
  }, [offline, load, retryInsights, strategies.status, matrix.status]);

  const write = useCallback(() => {
    if (writing.current) return;
    writing.current = true;
    setWritingSince(Date.now());
    setWriteError(null);
    api.createBriefing({ userTimezone: Intl.DateTimeFormat().resolvedOptions().timeZone }).then(
      (value) => {
        setBriefing({ status: "ready", value });
        writing.current = false;
        setWritingSince(null);
      },
      (error: unknown) => {
        setWriteError(errorMessage(error));
        writing.current = false;
        setWritingSince(null);
      },
    );
  }, [api]);

  const session = useMemo<BriefingSession>(
    () => ({ briefing, strategies, matrix, writingSince, writeError, offline, attach, reload: load, write, retryInsights }),
    [briefing, strategies, matrix, writingSince, writeError, offline, attach, load, write, retryInsights],
  );
  return <BriefingContext.Provider value={session}>{children}</BriefingContext.Provider>;
}

export function useBriefingSession(): BriefingSession {
  const session = useContext(BriefingContext);
  if (!session) throw new Error("useBriefingSession outside BriefingSessionProvider");
  return session;
}
