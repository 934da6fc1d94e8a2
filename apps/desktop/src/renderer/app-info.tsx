import { useEffect, useState } from "react";
import type { AppInfo, DesktopApi } from "../shared/desktop-api";
import { errorMessage } from "./components/error-message";

type AppInfoState = { status: "loading" } | { status: "ready"; info: AppInfo } | { status: "failed"; message: string };

function useAppInfo(api: DesktopApi): AppInfoState {
  const [state, setState] = useState<AppInfoState>({ status: "loading" });
  useEffect(() => {
    // A reply arriving after unmount (or after StrictMode's trial unmount) must not set state.
    let mounted = true;
    api.getAppInfo().then(
      (info) => {
        if (mounted) setState({ status: "ready", info });
      },
      (error: unknown) => {
        if (mounted) setState({ status: "failed", message: errorMessage(error) });
      },
    );
    return () => {
      mounted = false;
    };
  }, [api]);
  return state;
}

/** The app's version and how it runs, as the host reports them. */
export function AppInfoBadge({ api }: { api: DesktopApi }) {
  const state = useAppInfo(api);
  switch (state.status) {
    case "loading":
      return <span className="app-info">Connecting…</span>;
    case "failed":
      return (
        <span className="app-info app-info-failed" role="alert">
          Host unavailable: {state.message}
        </span>
      );
    case "ready":
      return (
        <span className="app-info" data-testid="app-info">
          v{state.info.version} · {state.info.mode}
        </span>
      );
  }
}
