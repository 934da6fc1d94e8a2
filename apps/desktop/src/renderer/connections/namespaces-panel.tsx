import { useState } from "react";
import type { DesktopApi, ToolNamespaceItem } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { sourcesWords, toolsWord } from "./connections-format";

/** Another device may switch a namespace too; this is soon enough to see it. */
const NAMESPACES_POLL_MS = 15_000;

/**
 * Tool namespaces on and off. A switch is busy until the server answers, then shows what the
 * server stored; a refusal leaves it as it was and says why.
 */
export function NamespacesPanel({ api, offline }: { api: DesktopApi; offline: boolean }) {
  const polled = usePolled(() => api.listToolNamespaces(), NAMESPACES_POLL_MS);
  // The server's answer to a switch, shown until the next poll brings the same news.
  const [answered, setAnswered] = useState<{ items: ToolNamespaceItem[]; basis: unknown } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  // Asked again after each change: another device's changes made meanwhile show up with it.
  const action = useAction(polled.refresh);
  const namespaces = answered && answered.basis === polled.data ? answered.items : polled.data;

  const toggle = (item: ToolNamespaceItem) => {
    const enabled = !item.enabled;
    setDone(null);
    setFailed(null);
    void action.run(`namespace:${item.namespace}`, async () => {
      try {
        const items = await api.setToolNamespace({ namespace: item.namespace, enabled });
        setAnswered({ items, basis: polled.data });
        setDone(
          enabled
            ? `“${item.namespace}” is on: your agent can use its ${toolsWord(item.toolCount)} again.`
            : `“${item.namespace}” is off: your agent and other apps can no longer use its ${toolsWord(item.toolCount)}.`,
        );
      } catch (error) {
        setFailed(`“${item.namespace}” could not be turned ${enabled ? "on" : "off"}`);
        throw error;
      }
    });
  };

  return (
    <section className="connections-panel" aria-labelledby="namespaces-title">
      <h3 id="namespaces-title">Tool namespaces</h3>
      <p className="hint">Turn a group of tools off and your agent stops using them, and so does every app with your key.</p>
      {polled.error && !offline && (
        <ErrorNotice message={`The tool namespaces could not be loaded: ${polled.error}`} onRetry={polled.refresh} />
      )}
      {namespaces === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : namespaces.length === 0 ? (
        <p className="empty-state">This server has no tools.</p>
      ) : (
        <ul className="namespace-list">
          {namespaces.map((item) => {
            const busy = action.running === `namespace:${item.namespace}`;
            return (
              <li key={item.namespace} data-enabled={item.enabled}>
                <label className="namespace-switch">
                  <input
                    type="checkbox"
                    role="switch"
                    checked={busy ? !item.enabled : item.enabled}
                    aria-checked={busy ? !item.enabled : item.enabled}
                    disabled={action.running !== null}
                    aria-describedby={`namespace-${item.namespace}-detail`}
                    onChange={() => toggle(item)}
                  />
                  <span className="namespace-name">{item.namespace}</span>
                </label>
                <span className="hint" id={`namespace-${item.namespace}-detail`}>
                  {toolsWord(item.toolCount)} · {sourcesWords(item.sources)}
                  {busy ? " · saving…" : item.enabled ? "" : " · off"}
                </span>
              </li>
            );
          })}
        </ul>
      )}
      {action.error && failed ? (
        <ErrorNotice message={`${failed}: ${action.error}`} />
      ) : (
        done && (
          <p className="connections-done" role="status">
            {done}
          </p>
        )
      )}
    </section>
  );
}
