import { scopeInWords } from "@tandem/core/scope-words";
import { useState } from "react";
import type { ConnectedAppItem, DesktopApi } from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { fullTime } from "../notes/note-time";

const APPS_POLL_MS = 30_000;

/** Apps the owner let into their account through the server's consent page, each with a way to disconnect it. */
export function ConnectedAppsPanel({ api, offline }: { api: DesktopApi; offline: boolean }) {
  const polled = usePolled(() => api.listConnectedApps(), APPS_POLL_MS);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction(polled.refresh);

  if (polled.data && !polled.data.supported) {
    return (
      <section className="connections-panel" aria-labelledby="apps-title">
        <h3 id="apps-title">Connected apps</h3>
        <p className="empty-state">This server doesn't list connected apps yet.</p>
      </section>
    );
  }
  const apps = polled.data?.apps;
  const revoke = (app: ConnectedAppItem) => {
    setDone(null);
    void action.run(`revoke:${app.clientId}`, async () => {
      await api.revokeConnectedApp({ clientId: app.clientId });
      setDone(`Disconnected “${app.name}”: it can no longer reach your account.`);
    });
  };

  return (
    <section className="connections-panel" aria-labelledby="apps-title">
      <h3 id="apps-title">Connected apps</h3>
      <p className="hint">Apps you allowed to use your account. Disconnect one and its access stops at once.</p>
      {polled.error && !offline && (
        <ErrorNotice message={`The connected apps could not be loaded: ${polled.error}`} onRetry={polled.refresh} />
      )}
      {apps === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : apps.length === 0 ? (
        <p className="empty-state">No app is connected to your account.</p>
      ) : (
        <ul className="connection-list">
          {apps.map((app) => (
            <li key={app.clientId} className="connection-row" aria-label={app.name}>
              <div className="connection-head">
                <span className="connection-name">{app.name}</span>
              </div>
              <div className="hint">
                Allowed {fullTime(app.grantedAt)} · {app.lastUsedAt ? `last used ${fullTime(app.lastUsedAt)}` : "not used yet"}
              </div>
              {app.scopes.length > 0 && (
                <div className="hint connection-scopes" title={`What it may do (${app.scopes.join(", ")})`}>
                  {/* In the words the server's consent and account pages use (one source in @tandem/core). */}
                  {app.scopes.map(scopeInWords).join("; ")}
                </div>
              )}
              <div className="connection-actions">
                <ConfirmButton
                  label="Disconnect"
                  question={`Disconnect “${app.name}”? It would need your permission again to reach your account.`}
                  disabled={action.running !== null}
                  onConfirm={() => revoke(app)}
                />
              </div>
            </li>
          ))}
        </ul>
      )}
      <ActionOutcome error={action.error} done={done} />
    </section>
  );
}
