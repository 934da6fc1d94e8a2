import { createContext, type ReactNode, useContext, useEffect, useState } from "react";
import type { DesktopApi, HostStatus } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";

/** About once a second, as the API suggests: cheap for the host, fresh enough for a status line. */
const POLL_MS = 1000;

export interface HostStatusState {
  /** The last answer (kept while a later poll fails); null before the first. */
  readonly status: HostStatus | null;
  /** Why the last poll failed (the host is gone, in web mode), or null. */
  readonly error: string | null;
}

const HostStatusContext = createContext<HostStatusState>({ status: null, error: null });

/** Polls `getStatus()` once for the whole window; views read it with {@link useHostStatus}. */
export function HostStatusProvider({ api, children }: { api: DesktopApi; children: ReactNode }) {
  const [state, setState] = useState<HostStatusState>({ status: null, error: null });
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The next poll is scheduled after the previous answer, so a slow host never piles calls up.
    const poll = async () => {
      try {
        const status = await api.getStatus();
        if (!stopped) setState({ status, error: null });
      } catch (error) {
        if (!stopped) setState((previous) => ({ status: previous.status, error: errorMessage(error) }));
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [api]);
  return <HostStatusContext.Provider value={state}>{children}</HostStatusContext.Provider>;
}

/** Sync, bridge and approvals at a glance, refreshed about once a second. */
export function useHostStatus(): HostStatusState {
  return useContext(HostStatusContext);
}
