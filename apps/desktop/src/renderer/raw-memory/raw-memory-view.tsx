import { countOf } from "@tandem/core/counts";
import { useState } from "react";
import type { DesktopApi, RawMemoryHit, RawMemoryStatus } from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { InputField } from "../components/field";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { fullTime } from "../notes/note-time";
// The Connections section's layout (panels in columns), with a few rules of its own.
import "../connections/connections.css";
import "./raw-memory.css";

const STATUS_POLL_MS = 15_000;

const RUNTIME_WORDS = { "claude-code": "Claude Code", codex: "Codex" } as const;

/** 1.2 MB, 840 KB, 12 bytes. */
export function sizeWords(bytes: number): string {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(1)} MB`;
  if (bytes >= 1_000) return `${Math.round(bytes / 1_000)} KB`;
  return countOf(bytes, "byte");
}

/**
 * The Raw memory section (docs/raw-memory.md): turn capture of this computer's coding-agent
 * sessions on (the recovery code shown once), see what was captured, search it (decrypted here),
 * forget a computer, turn it off. The server holds only ciphertext.
 */
export function RawMemoryView({ api }: { api: DesktopApi }) {
  const status = usePolled(() => api.getRawMemory(), STATUS_POLL_MS);
  const [code, setCode] = useState<string | null>(null);
  const action = useAction(status.refresh);
  const data = status.data;
  return (
    <div className="connections-view raw-memory-view">
      <p className="hint connections-intro">
        Raw memory keeps the sessions of your coding agents (Claude Code and Codex) from this computer, with secrets taken out, encrypted
        here before they leave. The server stores only ciphertext: only your computers and your recovery code can read them.
      </p>
      {status.error && <ErrorNotice message={`Raw memory could not be loaded: ${status.error}`} onRetry={status.refresh} />}
      {!data ? (
        !status.error && <p className="empty-state">Loading…</p>
      ) : code && data.state === "confirm-recovery" ? (
        <RecoveryCodePanel
          code={code}
          busy={action.running !== null}
          onSaved={() =>
            void action.run("saved", async () => {
              await api.confirmRawMemoryRecovery();
              setCode(null);
            })
          }
        />
      ) : data.state === "off" || data.state === "confirm-recovery" ? (
        <section className="connections-panel" aria-labelledby="raw-memory-off-title">
          <h3 id="raw-memory-off-title">Raw memory is off</h3>
          <p className="hint">
            Turned on, this computer captures each coding-agent session once it has finished, from {data.roots.claudeCode} and{" "}
            {data.roots.codex}. A session that cannot be cleaned of secrets is never sent.
          </p>
          <button
            type="button"
            className="primary"
            disabled={action.running !== null}
            onClick={() =>
              void action.run("enable", async () => {
                const answer = await api.enableRawMemory();
                setCode(answer.recoveryCode);
              })
            }
          >
            {action.running === "enable" ? "Turning on…" : "Turn on raw memory"}
          </button>
          <ActionOutcome error={action.error} done={null} />
        </section>
      ) : data.state === "needs-recovery" ? (
        <RecoverPanel api={api} onDone={status.refresh} />
      ) : data.state === "on" ? (
        <OnView api={api} data={data} refresh={status.refresh} />
      ) : null}
    </div>
  );
}

function RecoveryCodePanel({ code, busy, onSaved }: { code: string; busy: boolean; onSaved: () => void }) {
  const [saved, setSaved] = useState(false);
  return (
    <section className="connections-panel raw-memory-code" aria-labelledby="raw-memory-code-title">
      <h3 id="raw-memory-code-title">Your recovery code</h3>
      <p>
        Write it down or keep it in a password manager. It is shown this once: another computer needs it to read your raw memory, and nobody
        (not the server either) can give it back.
      </p>
      <output className="raw-memory-code-text" aria-label="Recovery code">
        {code}
      </output>
      <label>
        <input type="checkbox" checked={saved} onChange={(event) => setSaved(event.target.checked)} />I saved my recovery code
      </label>
      <div>
        <button type="button" className="primary" disabled={!saved || busy} onClick={onSaved}>
          Start capturing
        </button>
      </div>
    </section>
  );
}

function RecoverPanel({ api, onDone }: { api: DesktopApi; onDone: () => void }) {
  const [code, setCode] = useState("");
  const action = useAction(onDone);
  return (
    <section className="connections-panel" aria-labelledby="raw-memory-recover-title">
      <h3 id="raw-memory-recover-title">Enter your recovery code</h3>
      <p className="hint">Raw memory is on for another of your computers. Its recovery code lets this one read and add to it.</p>
      <form
        className="raw-memory-form"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run("recover", () => api.recoverRawMemory({ code }));
        }}
      >
        <InputField label="Recovery code" value={code} autoComplete="off" onChange={(event) => setCode(event.target.value)} />
        <button type="submit" className="primary" disabled={action.running !== null || code.trim().length < 8}>
          {action.running ? "Opening…" : "Open raw memory"}
        </button>
      </form>
      <ActionOutcome error={action.error} done={null} />
    </section>
  );
}

function OnView({ api, data, refresh }: { api: DesktopApi; data: RawMemoryStatus; refresh: () => void }) {
  const action = useAction(refresh);
  const [done, setDone] = useState<string | null>(null);
  return (
    <div className="connections-columns">
      <div className="connections-column">
        <SearchPanel api={api} />
        <section className="connections-panel" aria-labelledby="raw-memory-captured-title">
          <h3 id="raw-memory-captured-title">Captured sessions</h3>
          <p className="hint">
            {countOf(data.captured.length, "session")}
            {data.queued > 0 ? ` · ${data.queued} waiting to upload` : ""}
          </p>
          {data.error && <ErrorNotice message={data.error} />}
          {data.captured.length === 0 ? (
            <p className="empty-state">Nothing captured yet. A session is taken once it has been quiet for ten minutes.</p>
          ) : (
            <ul className="raw-memory-list">
              {data.captured.slice(0, 200).map((record) => (
                <li key={record.recordId} className="raw-memory-row">
                  <span>{RUNTIME_WORDS[record.runtime]}</span>
                  <span className="hint">{record.deviceName}</span>
                  <span className="hint">{sizeWords(record.bytes)}</span>
                  <span className="hint">{fullTime(record.createdAt)}</span>
                </li>
              ))}
            </ul>
          )}
          {data.refused.length > 0 && (
            <details>
              <summary>{countOf(data.refused.length, "session")} not uploaded</summary>
              <ul className="raw-memory-list">
                {data.refused.map((refused) => (
                  <li key={`${refused.at}:${refused.reason}`} className="hint">
                    {RUNTIME_WORDS[refused.runtime]}, {fullTime(refused.at)}: {refused.reason}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </section>
      </div>
      <div className="connections-column">
        <section className="connections-panel" aria-labelledby="raw-memory-devices-title">
          <h3 id="raw-memory-devices-title">Computers</h3>
          <ul className="raw-memory-list">
            {data.devices.map((device) => (
              <li key={device.deviceId} className="raw-memory-device" aria-label={device.name}>
                <div>
                  <strong>{device.name}</strong>
                  {device.thisDevice && <span className="hint"> (this computer)</span>}
                </div>
                <div className="hint">
                  {countOf(device.records, "session")} · {sizeWords(device.bytes)} · since {fullTime(device.enrolledAt)}
                  {device.hasCurrentKey ? "" : " · waiting for the recovery code"}
                </div>
                <ConfirmButton
                  label="Forget"
                  question={`Forget ${device.thisDevice ? "this computer" : device.name}? Its captured sessions are deleted and the key changes, so it cannot read what comes next.`}
                  disabled={action.running !== null}
                  onConfirm={() =>
                    void action.run(`forget:${device.deviceId}`, async () => {
                      setDone(null);
                      const result = await api.forgetRawMemoryDevice({ deviceId: device.deviceId });
                      setDone(`Forgot ${device.name}: ${countOf(result.deletedRecords, "session")} deleted; the key changed.`);
                    })
                  }
                />
              </li>
            ))}
          </ul>
          <ActionOutcome error={action.error} done={done} />
        </section>
        <section className="connections-panel" aria-labelledby="raw-memory-turn-off-title">
          <h3 id="raw-memory-turn-off-title">Capture on this computer</h3>
          <p className="hint">Turning it off stops capturing here; what was captured stays until you forget the computer.</p>
          <button type="button" disabled={action.running !== null} onClick={() => void action.run("off", () => api.disableRawMemory())}>
            Turn off
          </button>
        </section>
      </div>
    </div>
  );
}

function SearchPanel({ api }: { api: DesktopApi }) {
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<readonly RawMemoryHit[] | null>(null);
  const action = useAction();
  return (
    <section className="connections-panel" aria-labelledby="raw-memory-search-title">
      <h3 id="raw-memory-search-title">Search</h3>
      <form
        className="raw-memory-form"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run("search", async () => setHits(await api.searchRawMemory({ query })));
        }}
      >
        <InputField
          label="Search your sessions (decrypted on this computer)"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
        />
        <button type="submit" disabled={action.running !== null || query.trim() === ""}>
          {action.running ? "Searching…" : "Search"}
        </button>
      </form>
      <ActionOutcome error={action.error} done={null} />
      {hits &&
        (hits.length === 0 ? (
          <p className="empty-state">No session mentions it.</p>
        ) : (
          <ul className="raw-memory-list" aria-label="Search results">
            {hits.map((hit) => (
              <li key={hit.recordId} className="raw-memory-hit">
                <div className="hint">
                  {RUNTIME_WORDS[hit.runtime]} · {fullTime(hit.createdAt)}
                </div>
                <div className="raw-memory-snippet">{hit.snippet}</div>
              </li>
            ))}
          </ul>
        ))}
    </section>
  );
}
