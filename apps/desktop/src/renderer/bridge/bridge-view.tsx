import { useEffect, useState } from "react";
import type { BridgeRuntime, BridgeStatus, DesktopApi, PairingPrompt } from "../../shared/desktop-api";
import { clockTime } from "../approvals/time-left";
import { ErrorNotice } from "../components/error-notice";
import { openLink } from "../components/open-link";
import { useAction } from "../components/use-action";
import { useHostStatus } from "../layout/host-status";
import { BridgeActivityLog } from "./bridge-activity-log";
import { PAIRABLE_RUNTIMES, RUNTIME_LABELS, STATE_LABELS } from "./bridge-labels";
import { GuestAnswering } from "./guest-answering";
import "../approvals/approvals.css";
import "./bridge.css";

/**
 * The owner's bridge: this computer as a runtime endpoint other people's grants reach. Pairing is
 * by device code: the host asks the server for a code, the owner approves it on the server's
 * page, and the host notices by itself (this view only follows its status, which the layout polls
 * about once a second for the whole window).
 */
export function BridgeView({ api }: { api: DesktopApi }) {
  const { status, error } = useHostStatus();
  const [runtime, setRuntime] = useState<BridgeRuntime>("claude-code");
  // The prompt startBridgePairing answered, shown until the polled status takes over (≤ 1 s).
  const [started, setStarted] = useState<PairingPrompt | null>(null);
  // The status follows within a second; nothing to reload by hand.
  const action = useAction();
  const bridge = status?.bridge;
  const state = bridge?.state;
  useEffect(() => {
    if (state && state !== "unpaired") setStarted(null);
  }, [state]);

  if (!bridge) {
    return (
      <div className="bridge-view">
        <p className={error ? "approvals-load-error" : "empty-state"}>{error ? `Could not load the bridge: ${error}` : "Loading…"}</p>
      </div>
    );
  }

  const prompt = bridge.state === "pairing" ? (bridge.pairing ?? started) : started;
  const pair = () =>
    action.run("pair", async () => {
      setStarted(await api.startBridgePairing({ runtime }));
    });

  return (
    <div className="bridge-view">
      {action.error && <ErrorNotice message={action.error} />}
      {error && <p className="approvals-load-error">Could not refresh: {error}</p>}
      <BridgeStatusPanel bridge={bridge} />

      {prompt && (
        <section className="bridge-pairing" aria-labelledby="bridge-pairing-heading">
          <h3 id="bridge-pairing-heading">Approve this computer</h3>
          <p>Check that the server's approval page shows this code, then approve it there:</p>
          <output className="bridge-user-code" aria-label="Pairing code">
            {prompt.userCode}
          </output>
          <p className="bridge-hint">The code expires at {clockTime(prompt.expiresAt)}. This page updates by itself once you approve.</p>
          <div className="bridge-actions">
            <button
              type="button"
              className="bridge-primary"
              onClick={() => void action.run("open", () => openLink(api, prompt.approvalUrl))}
            >
              Open approval page
            </button>
            <button
              type="button"
              disabled={action.running !== null}
              onClick={() =>
                void action.run("cancel", async () => {
                  setStarted(null);
                  await api.unpairBridge();
                })
              }
            >
              Cancel
            </button>
          </div>
        </section>
      )}

      {!prompt && bridge.endpointId === null && (
        <section aria-labelledby="bridge-pair-heading">
          <h3 id="bridge-pair-heading">Pair this computer</h3>
          <p>
            Other people's agents can then ask your coding agent for help. They never run tools by themselves: every tool call waits for
            your decision under Approvals.
          </p>
          <fieldset className="bridge-runtimes">
            <legend>Coding agent on this computer</legend>
            {PAIRABLE_RUNTIMES.map((choice) => (
              <label key={choice}>
                <input type="radio" name="bridge-runtime" value={choice} checked={runtime === choice} onChange={() => setRuntime(choice)} />
                {RUNTIME_LABELS[choice]}
              </label>
            ))}
          </fieldset>
          <div className="bridge-actions">
            <button
              type="button"
              className="bridge-primary"
              disabled={action.running !== null}
              aria-busy={action.running === "pair"}
              onClick={() => void pair()}
            >
              Pair this computer
            </button>
          </div>
        </section>
      )}

      {bridge.endpointId !== null && <GuestAnswering api={api} bridge={bridge} />}

      {bridge.endpointId !== null && <BridgeActivityLog api={api} />}

      {bridge.endpointId !== null && (
        <div className="bridge-actions">
          <button
            type="button"
            disabled={action.running !== null}
            aria-busy={action.running === "unpair"}
            onClick={() => void action.run("unpair", () => api.unpairBridge())}
          >
            Unpair
          </button>
        </div>
      )}
    </div>
  );
}

function BridgeStatusPanel({ bridge }: { bridge: BridgeStatus }) {
  // A bridge whose coding agent is missing is reachable but cannot do anything: it is not "Online".
  const missing = bridge.runtimeInstalled === false && bridge.runtime !== null;
  const stateClass = missing ? "bridge-state-not-installed" : `bridge-state-${bridge.state}`;
  const stateLabel = missing ? "Not installed" : STATE_LABELS[bridge.state];
  return (
    <section aria-labelledby="bridge-status-heading">
      <h3 id="bridge-status-heading">Status</h3>
      <dl className="bridge-status">
        <dt>State</dt>
        <dd>
          <span className={`bridge-state ${stateClass}`} data-testid="bridge-state">
            {stateLabel}
          </span>
        </dd>
        <dt>Runtime</dt>
        <dd>
          {bridge.runtime ? RUNTIME_LABELS[bridge.runtime] : "None"}
          {missing && bridge.runtime && (
            <p className="bridge-runtime-missing" role="alert">
              {RUNTIME_LABELS[bridge.runtime]} is not installed on this computer, so tasks sent to you fail. Install it (the{" "}
              <code>{bridge.runtime === "codex" ? "codex" : "claude"}</code> command) and this page notices within seconds
              {bridge.state === "online" ? "; the server can already reach this computer." : "."}
            </p>
          )}
        </dd>
        <dt>Active tasks</dt>
        <dd data-testid="bridge-active-tasks">{bridge.activeTasks}</dd>
        {bridge.endpointId && (
          <>
            <dt>Endpoint</dt>
            <dd>
              <code>{bridge.endpointId}</code>
            </dd>
          </>
        )}
        {bridge.message && (
          <>
            <dt>Details</dt>
            <dd>{bridge.message}</dd>
          </>
        )}
      </dl>
    </section>
  );
}
