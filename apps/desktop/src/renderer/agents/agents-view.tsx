import { type FormEvent, useEffect, useId, useState } from "react";
import type {
  DesktopApi,
  ManagedAgentGrantItem,
  ManagedAgentItem,
  ManagedAgentList,
  ManagedAgentRunItem,
  ManagedAgentSettings,
  ToolDecision,
} from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ConfirmButton } from "../components/confirm-button";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { Field, InputField } from "../components/field";
import { ShownOnce } from "../components/shown-once";
import { useSaidAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { useHostStatus } from "../layout/host-status";
import { fullTime } from "../notes/note-time";
import { DECISION_WORDS, grantWords, MODEL_ALIASES, policyWords, runSourceWords, runStatusWords } from "./agents-format";
// The Connections section's panels, lists and forms, shared.
import "../connections/connections.css";
import "./agents.css";

const AGENTS_POLL_MS = 15_000;
const RUNS_POLL_MS = 5_000;
/** Core's handle pattern (MANAGED_AGENT_HANDLE), said before anything goes out. */
const HANDLE = /^[a-z][a-z0-9-]{1,31}$/;

interface ShownKey {
  readonly agentId: number;
  readonly handle: string;
  readonly apiKey: string;
}

/**
 * Managed agents: server-hosted agents of the owner's, each with its handle (how people and
 * programs reach it), instructions, model, grant (folders, todos), tool policy (allow / ask / deny
 * per tool) and keys. One can be paused and resumed, given keys (shown once) and have them revoked,
 * tried in a small chat, and its runs read with the tools they called.
 */
export function AgentsView({ api }: { api: DesktopApi }) {
  const offline = useHostStatus().status?.sync.state === "offline";
  const polled = usePolled(() => api.listManagedAgents(), AGENTS_POLL_MS);
  const [shownKey, setShownKey] = useState<ShownKey | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const [editing, setEditing] = useState(false);
  const [runsGeneration, setRunsGeneration] = useState(0);
  const { action, done, act, submitForm: submit } = useSaidAction(polled.refresh);
  const list = polled.data;
  const agents = list?.agents;
  const current = agents?.find((agent) => agent.id === selected) ?? null;

  if (list && (!list.supported || list.notAllowed)) {
    return (
      <div className="agents-view">
        <p className="empty-state">{list.notAllowed ?? "This server doesn't support managed agents yet."}</p>
      </div>
    );
  }

  return (
    <div className="agents-view">
      <p className="hint connections-intro">
        Agents of yours that live on the server: each has its own handle, instructions and keys, and reaches only what you grant it. People
        reach one by its handle (as they reach your own agent); programs with one of its keys.
      </p>
      {offline && (
        <p className="connections-offline" role="status">
          Agents live on the server, which can't be reached right now. What you see is how things stood; changes wait until it is back.
        </p>
      )}
      {polled.error && !offline && <ErrorNotice message={`The agents could not be loaded: ${polled.error}`} onRetry={polled.refresh} />}
      {shownKey && <KeyNotice shown={shownKey} onDone={() => setShownKey(null)} />}
      <div className="agents-outcome">
        <ActionOutcome error={action.error} done={done} />
      </div>
      <div className="agents-columns">
        <section className="connections-panel agents-list" aria-labelledby="agents-title">
          <h3 id="agents-title">Your agents</h3>
          {agents === undefined ? (
            !polled.error && <p className="empty-state">Loading…</p>
          ) : agents.length === 0 ? (
            <p className="empty-state">No agent yet. Create one below.</p>
          ) : (
            <ul className="connection-list">
              {agents.map((agent) => (
                <li key={agent.id} className="connection-row agent-row" aria-label={agent.handle} aria-current={agent.id === selected}>
                  <button
                    type="button"
                    className="agent-open"
                    onClick={() => {
                      setSelected(agent.id);
                      setEditing(false);
                    }}
                  >
                    <span className="connection-name">{agent.name}</span> <span className="hint">@{agent.handle}</span>
                  </button>
                  <span className="status-pill" data-status={agent.paused ? "needs_reauth" : "connected"}>
                    {agent.paused ? "Paused" : "Active"}
                  </span>
                </li>
              ))}
            </ul>
          )}
          <AgentForm
            key="new"
            list={list}
            title="Create an agent"
            submitLabel={action.running === "create" ? "Creating…" : "Create agent"}
            busy={action.running !== null}
            onSubmit={(handle, settings) =>
              submit("create", async () => {
                if (!HANDLE.test(handle)) {
                  throw new Error(
                    "The handle must be 2 to 32 lowercase letters, digits or '-', starting with a letter (release-desk, say).",
                  );
                }
                const made = await api.createManagedAgent({ handle, ...settings });
                setShownKey({ agentId: made.agent.id, handle: made.agent.handle, apiKey: made.apiKey });
                setSelected(made.agent.id);
                return `Created @${made.agent.handle}. Copy its API key now: it is not shown again.`;
              })
            }
          />
        </section>
        {current && list && (
          <section className="connections-panel agent-detail" aria-label={`Agent ${current.handle}`}>
            <div className="connection-head">
              <h3>
                {current.name} <span className="hint">@{current.handle}</span>
              </h3>
              <span className="status-pill" data-status={current.paused ? "needs_reauth" : "connected"}>
                {current.paused ? "Paused" : "Active"}
              </span>
            </div>
            <p className="hint">
              Model {current.model} · {grantWords(current, (id) => list.folders.find((folder) => folder.id === id)?.name)}
            </p>
            <p className="hint">{policyWords(current)}</p>
            {current.paused && <p className="connection-detail">Paused: nothing runs, and whoever reaches it is told it is paused.</p>}
            <div className="connection-actions">
              <button
                type="button"
                disabled={action.running !== null}
                onClick={() =>
                  act(`pause:${current.id}`, async () => {
                    await api.setManagedAgentPaused({ id: current.id, paused: !current.paused });
                    return current.paused
                      ? `Resumed @${current.handle}: it answers again.`
                      : `Paused @${current.handle}: nothing runs until you resume it.`;
                  })
                }
              >
                {action.running === `pause:${current.id}` ? "Saving…" : current.paused ? "Resume" : "Pause"}
              </button>
              <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
                {editing ? "Close settings" : "Settings"}
              </button>
              <ConfirmButton
                label="Delete"
                question={`Delete @${current.handle}? Its keys stop working at once and its runs are deleted.`}
                disabled={action.running !== null}
                onConfirm={() =>
                  act(`delete:${current.id}`, async () => {
                    await api.deleteManagedAgent({ id: current.id });
                    setSelected(null);
                    if (shownKey?.agentId === current.id) setShownKey(null);
                    return `Deleted @${current.handle} with its keys and runs.`;
                  })
                }
              />
            </div>
            {editing && (
              <AgentForm
                key={`edit:${current.id}`}
                list={list}
                agent={current}
                title="Settings"
                submitLabel={action.running === `save:${current.id}` ? "Saving…" : "Save changes"}
                busy={action.running !== null}
                onSubmit={(_handle, settings) =>
                  submit(`save:${current.id}`, async () => {
                    await api.updateManagedAgent({ id: current.id, ...settings });
                    setEditing(false);
                    return `Saved @${current.handle}'s settings.`;
                  })
                }
              />
            )}
            <TryIt key={`try:${current.id}`} api={api} agent={current} onRan={() => setRunsGeneration((value) => value + 1)} />
            <KeysPanel
              key={`keys:${current.id}`}
              api={api}
              agent={current}
              onKey={(apiKey) => setShownKey({ agentId: current.id, handle: current.handle, apiKey })}
            />
            <RunsPanel key={`runs:${current.id}`} api={api} agent={current} generation={runsGeneration} />
          </section>
        )}
      </div>
    </div>
  );
}

/** A key just made: shown this once, with a way to copy it. */
function KeyNotice({ shown, onDone }: { shown: ShownKey; onDone: () => void }) {
  return (
    <ShownOnce title="New API key" what="key" value={shown.apiKey} onDone={onDone}>
      An API key for @{shown.handle}. Whoever holds it acts as this agent, within what you granted it. It is shown only now and cannot be
      read again (make a new one if it is lost, and revoke this one).
    </ShownOnce>
  );
}

const NO_GRANT: ManagedAgentGrantItem = {
  notesAccess: { scope: "none", folderIds: [], access: "read" },
  todoAccess: { read: true, create: false },
};

/** Handle (on creation), name, instructions, model, namespaces, grant and the tool policy; what was typed stays when the server refuses it. */
function AgentForm({
  list,
  agent,
  title,
  submitLabel,
  busy,
  onSubmit,
}: {
  list: ManagedAgentList | undefined;
  agent?: ManagedAgentItem;
  title: string;
  submitLabel: string;
  busy: boolean;
  onSubmit: (handle: string, settings: ManagedAgentSettings) => Promise<boolean>;
}) {
  const [handle, setHandle] = useState("");
  const [name, setName] = useState(agent?.name ?? "");
  const [instructions, setInstructions] = useState(agent?.instructions ?? "");
  const [model, setModel] = useState(agent?.model ?? "default");
  const [namespaces, setNamespaces] = useState<readonly string[]>(agent?.namespaces ?? ["notes", "todos"]);
  const [grant, setGrant] = useState<ManagedAgentGrantItem>(agent?.grant ?? NO_GRANT);
  const [policy, setPolicy] = useState<Readonly<Record<string, ToolDecision>>>(agent?.toolPolicy ?? {});
  const titleId = useId();
  const tools = list?.tools ?? [];
  const folders = list?.folders ?? [];
  const models = MODEL_ALIASES.includes(model as (typeof MODEL_ALIASES)[number]) ? MODEL_ALIASES : [...MODEL_ALIASES, model];
  const notes = grant.notesAccess;
  const setNotes = (change: Partial<ManagedAgentGrantItem["notesAccess"]>) => setGrant({ ...grant, notesAccess: { ...notes, ...change } });
  const toggleIn = (values: readonly (string | number)[], value: string | number, on: boolean) =>
    on ? [...new Set([...values, value])] : values.filter((other) => other !== value);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    // Only the tools that are not simply allowed are sent: a tool the policy does not name is allowed.
    const toolPolicy = Object.fromEntries(Object.entries(policy).filter(([, decision]) => decision !== "allow"));
    const settings: ManagedAgentSettings = {
      ...(name.trim() ? { name: name.trim() } : {}),
      instructions,
      model,
      namespaces,
      grant,
      toolPolicy,
    };
    if ((await onSubmit(handle.trim(), settings)) && !agent) {
      setHandle("");
      setName("");
      setInstructions("");
      setPolicy({});
    }
  };

  return (
    <form className="server-form agent-form" aria-labelledby={titleId} onSubmit={(event) => void submit(event)}>
      <h4 id={titleId}>{title}</h4>
      {!agent && (
        <InputField
          label="Handle"
          value={handle}
          placeholder="release-desk"
          autoComplete="off"
          spellCheck={false}
          maxLength={32}
          onChange={(event) => setHandle(event.target.value.toLowerCase())}
        />
      )}
      <InputField label="Name" value={name} maxLength={100} placeholder="Release desk" onChange={(event) => setName(event.target.value)} />
      <Field label="Instructions">
        {(id) => (
          <textarea
            id={id}
            rows={3}
            value={instructions}
            placeholder="Answer from the Releases folder only. Be brief."
            onChange={(event) => setInstructions(event.target.value)}
          />
        )}
      </Field>
      <Field label="Model">
        {(id) => (
          <select id={id} value={model} onChange={(event) => setModel(event.target.value)}>
            {models.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        )}
      </Field>
      <fieldset className="agent-choices">
        <legend>Tool namespaces</legend>
        {["notes", "todos"].map((namespace) => (
          <label key={namespace}>
            <input
              type="checkbox"
              checked={namespaces.includes(namespace)}
              onChange={(event) => setNamespaces(toggleIn(namespaces, namespace, event.target.checked) as string[])}
            />
            {namespace}
          </label>
        ))}
      </fieldset>
      <fieldset className="agent-choices">
        <legend>Notes it may reach</legend>
        <select
          aria-label="Notes access"
          value={notes.scope}
          onChange={(event) => setNotes({ scope: event.target.value as "none" | "folders" | "all" })}
        >
          <option value="none">None</option>
          <option value="folders">Some folders</option>
          <option value="all">All my folders</option>
        </select>
        {notes.scope !== "none" && (
          <label>
            <input
              type="checkbox"
              checked={notes.access === "write"}
              onChange={(event) => setNotes({ access: event.target.checked ? "write" : "read" })}
            />
            May create and edit notes
          </label>
        )}
        {notes.scope === "folders" &&
          (folders.length === 0 ? (
            <span className="hint">You have no folder yet.</span>
          ) : (
            folders.map((folder) => (
              <label key={folder.id}>
                <input
                  type="checkbox"
                  checked={notes.folderIds.includes(folder.id)}
                  onChange={(event) => setNotes({ folderIds: toggleIn(notes.folderIds, folder.id, event.target.checked) as number[] })}
                />
                {folder.name}
              </label>
            ))
          ))}
        <span className="hint">Never your Memory, nor folders others share with you.</span>
      </fieldset>
      <fieldset className="agent-choices">
        <legend>Todos it may reach</legend>
        <label>
          <input
            type="checkbox"
            checked={grant.todoAccess.read}
            onChange={(event) => setGrant({ ...grant, todoAccess: { ...grant.todoAccess, read: event.target.checked } })}
          />
          Read todos
        </label>
        <label>
          <input
            type="checkbox"
            checked={grant.todoAccess.create}
            onChange={(event) => setGrant({ ...grant, todoAccess: { ...grant.todoAccess, create: event.target.checked } })}
          />
          Create todos
        </label>
      </fieldset>
      {tools.length > 0 && (
        <fieldset className="agent-policy">
          <legend>Tool policy</legend>
          <span className="hint">
            Ask me: the run waits for your approval (in Approvals) before the tool runs. Deny: the agent never sees it.
          </span>
          <table>
            <tbody>
              {tools
                .filter((tool) => namespaces.includes(tool.namespace))
                .map((tool) => (
                  <tr key={tool.name}>
                    <td>
                      <code>{tool.name}</code> <span className="hint">{tool.readWrite === "write" ? "changes things" : "reads"}</span>
                    </td>
                    <td>
                      <select
                        aria-label={`Policy for ${tool.name}`}
                        value={policy[tool.name] ?? "allow"}
                        onChange={(event) => setPolicy({ ...policy, [tool.name]: event.target.value as ToolDecision })}
                      >
                        {(["allow", "ask", "deny"] as const).map((decision) => (
                          <option key={decision} value={decision}>
                            {DECISION_WORDS[decision]}
                          </option>
                        ))}
                      </select>
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        </fieldset>
      )}
      <div className="server-form-buttons">
        <button type="submit" className="primary" disabled={busy || (!agent && handle.trim() === "")}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}

interface Exchange {
  readonly input: string;
  readonly run?: ManagedAgentRunItem;
  readonly error?: string;
}

/** A small chat with the agent: each message is one run under its grant and policy, shown with the tools it called. */
function TryIt({ api, agent, onRan }: { api: DesktopApi; agent: ManagedAgentItem; onRan: () => void }) {
  const [exchanges, setExchanges] = useState<readonly Exchange[]>([]);
  const [text, setText] = useState("");
  const [running, setRunning] = useState(false);
  const titleId = useId();
  const send = async (event: FormEvent) => {
    event.preventDefault();
    const input = text.trim();
    if (!input || running) return;
    setRunning(true);
    setText("");
    setExchanges((previous) => [...previous, { input }]);
    let result: Exchange;
    try {
      result = { input, run: await api.runManagedAgent({ id: agent.id, input }) };
    } catch (failure) {
      result = { input, error: errorMessage(failure) };
      setText(input);
    }
    setExchanges((previous) => [...previous.slice(0, -1), result]);
    setRunning(false);
    onRan();
  };
  return (
    <section className="agent-try" aria-labelledby={titleId}>
      <h4 id={titleId}>Try it</h4>
      <ol className="agent-transcript" aria-label="Try-it transcript">
        {exchanges.map((exchange, index) => (
          <li key={index} className="agent-exchange">
            <p className="agent-said">{exchange.input}</p>
            {exchange.run ? (
              <div className="agent-answer" data-status={exchange.run.status}>
                <p>{exchange.run.output || (exchange.run.error ?? runStatusWords(exchange.run))}</p>
                <span className="hint">
                  {runStatusWords(exchange.run)}
                  {exchange.run.toolsUsed.length > 0 && ` · tools: ${exchange.run.toolsUsed.join(", ")}`}
                </span>
              </div>
            ) : exchange.error ? (
              <ErrorNotice message={exchange.error} />
            ) : (
              <p className="hint" role="status">
                @{agent.handle} is working…
              </p>
            )}
          </li>
        ))}
      </ol>
      <form className="agent-try-form" onSubmit={(event) => void send(event)}>
        <input
          aria-label={`Message to @${agent.handle}`}
          value={text}
          placeholder={agent.paused ? "Resume the agent to try it" : `Ask @${agent.handle} something`}
          onChange={(event) => setText(event.target.value)}
        />
        <button type="submit" disabled={running || text.trim() === ""}>
          {running ? "Running…" : "Send"}
        </button>
      </form>
    </section>
  );
}

/** The agent's keys: make one (shown once, above), revoke one. */
function KeysPanel({ api, agent, onKey }: { api: DesktopApi; agent: ManagedAgentItem; onKey: (apiKey: string) => void }) {
  const polled = usePolled(() => api.listManagedAgentKeys({ id: agent.id }), AGENTS_POLL_MS);
  const { action, done, act } = useSaidAction(polled.refresh);
  const [label, setLabel] = useState("");
  const keys = polled.data;
  const titleId = useId();
  const create = (event: FormEvent) => {
    event.preventDefault();
    act("create", async () => {
      const made = await api.createManagedAgentKey({ id: agent.id, ...(label.trim() ? { label: label.trim() } : {}) });
      onKey(made.apiKey);
      setLabel("");
      return `Made a key${made.key.label ? ` “${made.key.label}”` : ""}: copy it now, above. It is not shown again.`;
    });
  };
  return (
    <section className="agent-keys" aria-labelledby={titleId}>
      <h4 id={titleId}>Keys</h4>
      {polled.error && <ErrorNotice message={`The keys could not be loaded: ${polled.error}`} onRetry={polled.refresh} />}
      {keys === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : keys.length === 0 ? (
        <p className="empty-state">No key.</p>
      ) : (
        <ul className="agent-key-list">
          {keys.map((key) => (
            <li key={key.keyId} aria-label={key.label ?? key.keyId} data-revoked={key.revokedAt !== null}>
              <span>{key.label ?? <span className="hint">no label</span>}</span>{" "}
              <span className="hint">
                made {fullTime(key.createdAt)}
                {key.lastUsedAt ? ` · last used ${fullTime(key.lastUsedAt)}` : " · never used"}
                {key.revokedAt ? ` · revoked ${fullTime(key.revokedAt)}` : ""}
              </span>
              {!key.revokedAt && (
                <ConfirmButton
                  label="Revoke"
                  question={`Revoke this key? Whatever uses it stops working at once.`}
                  disabled={action.running !== null}
                  onConfirm={() =>
                    act(`revoke:${key.keyId}`, async () => {
                      await api.revokeManagedAgentKey({ id: agent.id, keyId: key.keyId });
                      return "Revoked the key: it no longer works.";
                    })
                  }
                />
              )}
            </li>
          ))}
        </ul>
      )}
      <form className="agent-key-form" onSubmit={create}>
        <input
          aria-label="Key label"
          value={label}
          maxLength={100}
          placeholder="Label (optional)"
          onChange={(event) => setLabel(event.target.value)}
        />
        <button type="submit" disabled={action.running !== null}>
          {action.running === "create" ? "Making…" : "New key"}
        </button>
      </form>
      <ActionOutcome error={action.error} done={done} />
    </section>
  );
}

/** The agent's newest runs, each with how it was asked, its status, the tools it called and its tokens. */
function RunsPanel({ api, agent, generation }: { api: DesktopApi; agent: ManagedAgentItem; generation: number }) {
  const polled = usePolled(() => api.listManagedAgentRuns({ id: agent.id }), RUNS_POLL_MS);
  const runs = polled.data;
  const titleId = useId();
  const { refresh } = polled;
  // A run made by Try it shows at once.
  useEffect(() => {
    if (generation > 0) refresh();
  }, [generation, refresh]);
  return (
    <section className="agent-runs" aria-labelledby={titleId}>
      <h4 id={titleId}>Runs</h4>
      {polled.error && <ErrorNotice message={`The runs could not be loaded: ${polled.error}`} onRetry={refresh} />}
      {runs === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : runs.length === 0 ? (
        <p className="empty-state">No run yet.</p>
      ) : (
        <ul className="agent-run-list">
          {runs.map((run) => (
            <li key={run.id} className="agent-run" data-status={run.status} aria-label={`Run ${run.id}`}>
              <div className="agent-run-head">
                <span className="agent-run-status">{runStatusWords(run)}</span>
                <span className="hint">
                  {fullTime(run.createdAt)} · {runSourceWords(run)} · {run.totalTokens} tokens
                </span>
              </div>
              <p className="agent-run-input">{run.input}</p>
              {run.output && <p className="agent-run-output">{run.output}</p>}
              {run.error && <p className="connection-detail">{run.error}</p>}
              <div className="hint agent-run-tools">
                {run.toolsUsed.length > 0 ? `Tools called: ${run.toolsUsed.join(", ")}` : "No tool called"}
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
