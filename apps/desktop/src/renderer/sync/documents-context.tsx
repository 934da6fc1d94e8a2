import { createContext, type ReactNode, useEffect, useState } from "react";
import type { DesktopApi, LocalSyncInfo } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { takeEarly } from "../early-calls";
import { DocumentHub } from "./document-hub";

export interface DocumentsContextValue {
  readonly hub: DocumentHub;
  readonly info: LocalSyncInfo;
}

export const DocumentsContext = createContext<DocumentsContextValue | null>(null);

type Connection =
  | { readonly status: "connecting" }
  | { readonly status: "ready"; readonly value: DocumentsContextValue }
  | { readonly status: "failed"; readonly message: string };

/**
 * Connects to the host's local sync hub for the signed-in user and gives everything below it
 * access to documents (see use-document.ts). Mount it once per session: keying it by user id makes
 * a new sign-in start from fresh documents.
 */
export function DocumentsProvider({ api, children }: { api: DesktopApi; children: ReactNode }) {
  const [connection, setConnection] = useState<Connection>({ status: "connecting" });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let hub: DocumentHub | undefined;
    let cancelled = false;
    setConnection({ status: "connecting" });
    (attempt === 0 ? takeEarly(api, "getLocalSync") : api.getLocalSync()).then(
      (info) => {
        if (cancelled) return;
        hub = new DocumentHub(info);
        setConnection({ status: "ready", value: { hub, info } });
      },
      (error: unknown) => {
        if (!cancelled) setConnection({ status: "failed", message: errorMessage(error) });
      },
    );
    return () => {
      cancelled = true;
      hub?.destroy();
    };
    // `attempt` is the retry button's signal: a new value runs the effect again.
  }, [api, attempt]);

  switch (connection.status) {
    case "connecting":
      return <p className="empty-state">Opening your documents…</p>;
    case "failed":
      return <ErrorNotice message={`Could not reach the local sync hub: ${connection.message}`} onRetry={() => setAttempt((n) => n + 1)} />;
    case "ready":
      return <DocumentsContext.Provider value={connection.value}>{children}</DocumentsContext.Provider>;
  }
}
