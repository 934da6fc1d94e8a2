import { useState } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { toolsWord } from "./connections-format";
import { StatusPill } from "./status-pill";

const INTEGRATIONS_POLL_MS = 15_000;

/**
 * Services connected for the agent's tools through OAuth, with their health. Remote tool servers
 * are in the list too (one health list on the server), but they have their own panel.
 */
export function IntegrationsPanel({ api, offline }: { api: DesktopApi; offline: boolean }) {
  const polled = usePolled(() => api.listToolIntegrations(), INTEGRATIONS_POLL_MS);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction(polled.refresh);
  const integrations = polled.data?.filter((integration) => integration.kind === "oauth");

  return (
    <section className="connections-panel" aria-labelledby="integrations-title">
      <h3 id="integrations-title">Integrations</h3>
      <p className="hint">Services you signed in to for your agent's tools.</p>
      {polled.error && !offline && (
        <ErrorNotice message={`The integrations could not be loaded: ${polled.error}`} onRetry={polled.refresh} />
      )}
      {integrations === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : integrations.length === 0 ? (
        <p className="empty-state">No integration is connected.</p>
      ) : (
        <ul className="connection-list">
          {integrations.map((integration) => (
            <li key={integration.id} className="connection-row" aria-label={integration.name}>
              <div className="connection-head">
                <span className="connection-name">{integration.name}</span>
                <StatusPill state={integration.state} />
              </div>
              {integration.state.detail && <p className="connection-detail">{integration.state.detail}</p>}
              <div className="hint">{toolsWord(integration.toolCount)}</div>
              <div className="connection-actions">
                <ConfirmButton
                  label="Remove"
                  question={`Remove “${integration.name}”? Your agent loses its tools at once.`}
                  disabled={action.running !== null}
                  onConfirm={() => {
                    setDone(null);
                    void action.run(`remove:${integration.id}`, async () => {
                      await api.removeToolIntegration({ id: integration.id });
                      setDone(`Removed “${integration.name}”.`);
                    });
                  }}
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
