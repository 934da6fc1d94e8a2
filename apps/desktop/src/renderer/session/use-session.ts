import { useCallback, useEffect, useState } from "react";
import type { DesktopApi, SessionInfo } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { peekEarly, takeEarly } from "../early-calls";

export type SessionState =
  | { readonly status: "loading" }
  | { readonly status: "failed"; readonly message: string }
  | { readonly status: "known"; readonly info: SessionInfo };

export interface Session {
  readonly state: SessionState;
  /** Adopts a session the host answered (after signing in or out). */
  set(info: SessionInfo): void;
  reload(): void;
}

/** Who is signed in, as the host knows it (it restores a saved sign-in at start). */
export function useSession(api: DesktopApi): Session {
  const [state, setState] = useState<SessionState>(() => {
    const early = peekEarly(api, "getSession");
    return early ? { status: "known", info: early } : { status: "loading" };
  });
  const [generation, setGeneration] = useState(0);
  // `generation` is reload()'s signal: a new value runs the effect again.
  useEffect(() => {
    let mounted = true;
    // The first time, the answer to the call the page made as it started.
    (generation === 0 ? takeEarly(api, "getSession") : api.getSession()).then(
      (info) => {
        // The same answer as peeked at the first render changes nothing (and renders nothing again).
        if (mounted) setState((current) => (current.status === "known" && current.info === info ? current : { status: "known", info }));
      },
      (error: unknown) => {
        if (mounted) setState({ status: "failed", message: errorMessage(error) });
      },
    );
    return () => {
      mounted = false;
    };
  }, [api, generation]);
  const set = useCallback((info: SessionInfo) => setState({ status: "known", info }), []);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { state, set, reload };
}
