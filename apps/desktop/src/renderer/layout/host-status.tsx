import { createContext, type ReactNode, useContext, useMemo, useRef, useState } from "react";
import type { DesktopApi, HostStatus } from "../../shared/desktop-api";
import { usePolled } from "../components/use-polled";
import { peekEarly, takeEarly } from "../early-calls";

/** About once a second, as the API suggests: cheap for the host, fresh enough for a status line. */
const POLL_MS = 1000;

export interface HostStatusState {
  /** The last answer (kept while a later poll fails); null before the first. */
  readonly status: HostStatus | null;
  /** Why the last poll failed (the host is gone, in web mode), or null. */
  readonly error: string | null;
}

const HostStatusContext = createContext<HostStatusState>({ status: null, error: null });

/**
 * Polls `getStatus()` once for the whole window; views read it with {@link useHostStatus}. The first
 * answer is the page's early call (made as it starts, with the server's counts of what waits for the
 * owner), so the first frame already has the badges, rather than the frame after the first poll.
 */
export function HostStatusProvider({ api, children }: { api: DesktopApi; children: ReactNode }) {
  const [early] = useState(() => peekEarly(api, "getStatus") ?? null);
  const first = useRef(true);
  const { data, error } = usePolled(() => {
    if (!first.current) return api.getStatus();
    first.current = false;
    return takeEarly(api, "getStatus");
  }, POLL_MS);
  const state = useMemo<HostStatusState>(() => ({ status: data ?? early, error }), [data, early, error]);
  return <HostStatusContext.Provider value={state}>{children}</HostStatusContext.Provider>;
}

/** Sync, bridge and approvals at a glance, refreshed about once a second. */
export function useHostStatus(): HostStatusState {
  return useContext(HostStatusContext);
}
