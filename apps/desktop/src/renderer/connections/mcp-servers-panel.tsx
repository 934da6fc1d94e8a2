import { type FormEvent, useEffect, useId, useState } from "react";
import type { DesktopApi, McpServerItem } from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { InputField } from "../components/field";
import { openLink } from "../components/open-link";
import { useSaidAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { fullTime } from "../notes/note-time";
import { stateLine, toolsWord, wantsSignIn } from "./connections-format";
import { StatusPill } from "./status-pill";

/** The list's pace while nothing is expected to change, and while a sign-in in the browser is awaited. */
const SERVERS_POLL_MS = 15_000;
const SIGN_IN_POLL_MS = 2_000;
/** How long a sign-in is awaited when the server did not say (its state is single use for 10 minutes). */
const SIGN_IN_WAIT_MS = 10 * 60_000;

interface AwaitedSignIn {
  readonly id: string;
  readonly name: string;
  readonly authorizeUrl: string;
  readonly until: number;
}

/**
 * Remote tool servers (MCP): add one by address, sign in to it in the browser, refresh its tool
 * list, disconnect or remove it. Signing in happens in the system browser (the remote server's
 * page); the panel then polls the server until it reports the connection, or the time runs out.
 */
export function McpServersPanel({ api, offline }: { api: DesktopApi; offline: boolean }) {
  const [awaited, setAwaited] = useState<AwaitedSignIn | null>(null);
  const polled = usePolled(() => api.listMcpServers(), awaited ? SIGN_IN_POLL_MS : SERVERS_POLL_MS);
  const { action, done, setDone, act, submitForm } = useSaidAction(polled.refresh);
  const servers = polled.data?.servers;

  // The awaited sign-in ends when the server reports the connection, or when its time is up.
  useEffect(() => {
    if (!awaited) return;
    const server = servers?.find((candidate) => candidate.id === awaited.id);
    if (server?.state.status === "connected") {
      setAwaited(null);
      setDone(`Connected to “${server.name}”: ${toolsWord(server.toolCount)} for your agent.`);
      return;
    }
    const left = awaited.until - Date.now();
    const timer = setTimeout(
      () => {
        setAwaited(null);
        setDone(`The sign-in to “${awaited.name}” was not finished in time. Choose Sign in to try again.`);
      },
      Math.max(0, left),
    );
    return () => clearTimeout(timer);
  }, [awaited, servers]);

  const signIn = (server: McpServerItem) => {
    setDone(null);
    void action.run(`signin:${server.id}`, async () => {
      const { authorizeUrl, expiresAt } = await api.authorizeMcpServer({ id: server.id });
      const until = expiresAt ? Date.parse(expiresAt) : Date.now() + SIGN_IN_WAIT_MS;
      setAwaited({ id: server.id, name: server.name, authorizeUrl, until: Number.isNaN(until) ? Date.now() + SIGN_IN_WAIT_MS : until });
      await openLink(api, authorizeUrl);
    });
  };
  if (polled.data && !polled.data.supported) {
    return (
      <section className="connections-panel" aria-labelledby="mcp-title">
        <h3 id="mcp-title">Remote tool servers</h3>
        <p className="empty-state">This server doesn't support remote tool servers yet.</p>
      </section>
    );
  }

  if (polled.data?.notAllowed) {
    return (
      <section className="connections-panel" aria-labelledby="mcp-title">
        <h3 id="mcp-title">Remote tool servers</h3>
        <p className="empty-state">{polled.data.notAllowed}</p>
      </section>
    );
  }

  return (
    <section className="connections-panel" aria-labelledby="mcp-title">
      <h3 id="mcp-title">Remote tool servers</h3>
      <p className="hint">
        MCP servers elsewhere whose tools your agent may use. Their tools appear under the server's name, and you can turn them off like any
        namespace.
      </p>
      {polled.error && !offline && (
        <ErrorNotice message={`The remote tool servers could not be loaded: ${polled.error}`} onRetry={polled.refresh} />
      )}
      {awaited && (
        <div className="sign-in-waiting" role="status">
          <span>Finish signing in to “{awaited.name}” in your browser. This updates by itself once you are done.</span>
          <button type="button" className="link-button" onClick={() => void openLink(api, awaited.authorizeUrl)}>
            Open the sign-in page again
          </button>
          <button type="button" onClick={() => setAwaited(null)}>
            Stop waiting
          </button>
        </div>
      )}
      {servers === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : servers.length === 0 ? (
        <p className="empty-state">No remote tool server yet.</p>
      ) : (
        <ul className="connection-list">
          {servers.map((server) => (
            <ServerRow
              key={server.id}
              server={server}
              running={action.running}
              onSignIn={() => signIn(server)}
              onRefresh={() =>
                act(`refresh:${server.id}`, async () => {
                  const fresh = await api.refreshMcpServer({ id: server.id });
                  return `Checked “${fresh.name}”: ${stateLine(fresh.state)} (${toolsWord(fresh.toolCount)}).`;
                })
              }
              onDisconnect={() =>
                act(`disconnect:${server.id}`, async () => {
                  await api.disconnectMcpServer({ id: server.id });
                  return `Disconnected “${server.name}”: its tools are off until it is connected again.`;
                })
              }
              onRemove={() =>
                act(`remove:${server.id}`, async () => {
                  await api.removeMcpServer({ id: server.id });
                  return `Removed “${server.name}” and its tools.`;
                })
              }
              onSave={(name, serverUrl) =>
                submitForm(`edit:${server.id}`, async () => {
                  const changed = await api.updateMcpServer({
                    id: server.id,
                    ...(name !== server.name ? { name } : {}),
                    ...(serverUrl !== server.serverUrl ? { serverUrl } : {}),
                  });
                  return `Saved “${changed.name}”. ${stateLine(changed.state)}`;
                })
              }
            />
          ))}
        </ul>
      )}
      <ActionOutcome error={action.error} done={done} />
      <ServerForm
        title="Add a remote tool server"
        submitLabel={action.running === "add" ? "Adding…" : "Add server"}
        busy={action.running !== null}
        onSubmit={(name, serverUrl) =>
          submitForm("add", async () => {
            const server = await api.addMcpServer({ name, serverUrl });
            return server.state.status === "connected"
              ? `Added “${server.name}”: ${toolsWord(server.toolCount)} for your agent.`
              : `Added “${server.name}”. ${stateLine(server.state)}`;
          })
        }
      />
    </section>
  );
}

function ServerRow({
  server,
  running,
  onSignIn,
  onRefresh,
  onDisconnect,
  onRemove,
  onSave,
}: {
  server: McpServerItem;
  running: string | null;
  onSignIn: () => void;
  onRefresh: () => void;
  onDisconnect: () => void;
  onRemove: () => void;
  onSave: (name: string, serverUrl: string) => Promise<boolean>;
}) {
  const [editing, setEditing] = useState(false);
  const busy = running !== null;
  const mine = (verb: string) => running === `${verb}:${server.id}`;
  if (editing) {
    return (
      <li className="connection-row" aria-label={server.name}>
        <ServerForm
          title={`Change “${server.name}”`}
          submitLabel={mine("edit") ? "Saving…" : "Save"}
          initial={{ name: server.name, serverUrl: server.serverUrl }}
          busy={busy}
          onSubmit={async (name, serverUrl) => {
            const saved = await onSave(name, serverUrl);
            if (saved) setEditing(false);
            return saved;
          }}
          onCancel={() => setEditing(false)}
        />
        <p className="hint">A new address forgets its sign-in: you will sign in again.</p>
      </li>
    );
  }
  return (
    <li className="connection-row" aria-label={server.name}>
      <div className="connection-head">
        <span className="connection-name">{server.name}</span>
        <StatusPill state={server.state} />
      </div>
      <div className="hint connection-url">{server.serverUrl}</div>
      {server.state.detail && <p className="connection-detail">{server.state.detail}</p>}
      <div className="hint">
        {toolsWord(server.toolCount)}
        {server.lastCheckedAt && ` · checked ${fullTime(server.lastCheckedAt)}`}
      </div>
      {server.tools.length > 0 && (
        <details className="connection-tools">
          <summary>Its tools</summary>
          <ul>
            {server.tools.map((tool) => (
              <li key={tool.name}>
                <code>{tool.name}</code> {tool.readWrite === "write" && <span className="hint">(writes)</span>}{" "}
                <span className="hint">{tool.description}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
      <div className="connection-actions">
        {wantsSignIn(server.state, server.authorized) && (
          <button type="button" className="primary" disabled={busy} onClick={onSignIn}>
            {mine("signin") ? "Opening…" : "Sign in"}
          </button>
        )}
        <button type="button" disabled={busy} onClick={onRefresh}>
          {mine("refresh") ? "Checking…" : "Refresh"}
        </button>
        {(server.authorized || server.state.status === "connected") && (
          <button type="button" disabled={busy} onClick={onDisconnect}>
            {mine("disconnect") ? "Signing out…" : "Disconnect"}
          </button>
        )}
        <button type="button" disabled={busy} onClick={() => setEditing(true)}>
          Change
        </button>
        <ConfirmButton
          label="Remove"
          question={`Remove “${server.name}”? Your agent loses its tools, and its sign-in is forgotten.`}
          disabled={busy}
          onConfirm={onRemove}
        />
      </div>
    </li>
  );
}

/**
 * Name and address, to add a server or change one; what was typed is kept when the server refuses
 * it, so nothing has to be typed twice.
 */
function ServerForm({
  title,
  submitLabel,
  initial,
  busy,
  onSubmit,
  onCancel,
}: {
  title: string;
  submitLabel: string;
  initial?: { name: string; serverUrl: string };
  busy: boolean;
  onSubmit: (name: string, serverUrl: string) => Promise<boolean>;
  onCancel?: () => void;
}) {
  const [name, setName] = useState(initial?.name ?? "");
  const [serverUrl, setServerUrl] = useState(initial?.serverUrl ?? "");
  const titleId = useId();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if ((await onSubmit(name.trim(), serverUrl.trim())) && !initial) {
      setName("");
      setServerUrl("");
    }
  };
  const unchanged = initial !== undefined && name.trim() === initial.name && serverUrl.trim() === initial.serverUrl;
  return (
    <form className="server-form" aria-labelledby={titleId} onSubmit={(event) => void submit(event)}>
      <h4 id={titleId}>{title}</h4>
      <InputField
        label="Name"
        value={name}
        placeholder="github"
        autoComplete="off"
        spellCheck={false}
        title="Lower-case letters, digits, - and _: its tools appear under this name"
        onChange={(event) => setName(event.target.value)}
      />
      <InputField
        label="Server address"
        type="url"
        value={serverUrl}
        placeholder="https://example.com/mcp"
        autoComplete="off"
        spellCheck={false}
        onChange={(event) => setServerUrl(event.target.value)}
      />
      <div className="server-form-buttons">
        <button type="submit" disabled={busy || unchanged || name.trim() === "" || serverUrl.trim() === ""}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
