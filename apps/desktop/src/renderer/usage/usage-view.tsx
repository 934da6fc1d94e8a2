import { useEffect, useState } from "react";
import type { AccountBudgetInput, DesktopApi, ScopedBudgetItem, UsageGroupItem, UsageOverview } from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ErrorNotice } from "../components/error-notice";
import { InputField } from "../components/field";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { useHostStatus } from "../layout/host-status";
import { TokensChart } from "./usage-chart";
// The Connections section's layout (panels in columns, the offline notice), with a few rules of its own.
import "../connections/connections.css";
import "./usage.css";

const USAGE_POLL_MS = 30_000;
const number = new Intl.NumberFormat("en");

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

/**
 * The Usage section: this month's model tokens by model and by source (Chart.js), the devices
 * active this month, the account's budget (editable by the owner) and the simulated invoice. All of
 * it is the server's; offline, what was last read stays.
 */
export function UsageView({ api }: { api: DesktopApi }) {
  const offline = useHostStatus().status?.sync.state === "offline";
  const usage = usePolled(() => api.getUsage(), USAGE_POLL_MS);
  const [saved, setSaved] = useState<UsageOverview | null>(null);
  const data = saved ?? usage.data;
  const onSaved = (next: UsageOverview) => {
    setSaved(next);
    usage.refresh();
  };

  if (data && !data.supported) return <p className="empty-state">This server doesn't meter usage yet.</p>;
  return (
    <div className="connections-view usage-view">
      <p className="hint connections-intro">
        What your agent used this month{data?.month ? ` (${data.month}, UTC)` : ""}, the budget that caps it, and what it would cost at the
        server's rates. Nothing is charged.
      </p>
      {offline && (
        <p className="connections-offline" role="status">
          Usage is kept on the server, which can't be reached right now. What you see is how things stood.
        </p>
      )}
      {usage.error && !offline && !data && <ErrorNotice message={usage.error} onRetry={usage.refresh} />}
      {data && (
        <div className="connections-columns">
          <div className="connections-column">
            <TokensPanel title="Tokens by model" id="usage-models" groups={data.byModel} />
            <TokensPanel title="Tokens by source" id="usage-sources" groups={data.bySource} />
          </div>
          <div className="connections-column">
            <TotalsPanel data={data} />
            <BudgetPanel api={api} data={data} onSaved={onSaved} />
            <ScopedBudgetsPanel api={api} data={data} onSaved={onSaved} />
            <InvoicePanel data={data} />
          </div>
        </div>
      )}
    </div>
  );
}

function TokensPanel({ title, id, groups }: { title: string; id: string; groups: readonly UsageGroupItem[] }) {
  return (
    <section className="connections-panel" aria-labelledby={id}>
      <h3 id={id}>{title}</h3>
      {groups.length === 0 ? (
        <p className="hint">No model calls this month.</p>
      ) : (
        <>
          <TokensChart groups={groups} label={`${title}: input and output tokens this month`} />
          <table className="usage-table">
            <thead>
              <tr>
                <th scope="col">{title.replace("Tokens by ", "")}</th>
                <th scope="col">Input</th>
                <th scope="col">Output</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((group) => (
                <tr key={group.name}>
                  <td>{group.name}</td>
                  <td>{number.format(group.tokensIn)}</td>
                  <td>{number.format(group.tokensOut)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function TotalsPanel({ data }: { data: UsageOverview }) {
  const { total } = data;
  return (
    <section className="connections-panel" aria-labelledby="usage-totals">
      <h3 id="usage-totals">This month</h3>
      <dl className="usage-totals">
        <dt>Tokens</dt>
        <dd>{number.format(total.tokensIn + total.tokensOut)}</dd>
        <dt>Agent runs</dt>
        <dd>{number.format(total.runs)}</dd>
        <dt>Tool calls</dt>
        <dd>{number.format(total.toolCalls)}</dd>
        <dt>Active devices</dt>
        <dd>{number.format(total.activeDevices)}</dd>
      </dl>
      {data.devices.length > 0 && (
        <ul className="usage-devices" aria-label="Devices active this month">
          {data.devices.map((device) => (
            <li key={device}>{device}</li>
          ))}
        </ul>
      )}
    </section>
  );
}

const FIELDS: { key: keyof AccountBudgetInput; label: string }[] = [
  { key: "tokensPerMonth", label: "Tokens a month" },
  { key: "runsPerDay", label: "Agent runs a day" },
  { key: "activeDevices", label: "Active devices a month" },
];

function BudgetPanel({ api, data, onSaved }: { api: DesktopApi; data: UsageOverview; onSaved: (next: UsageOverview) => void }) {
  const toForm = () => Object.fromEntries(FIELDS.map(({ key }) => [key, data.budget[key] === null ? "" : String(data.budget[key])]));
  const [form, setForm] = useState<Record<string, string>>(toForm);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  // The form follows the server's budget when it changes, not every poll.
  useEffect(() => setForm(toForm()), [data.budget.tokensPerMonth, data.budget.runsPerDay, data.budget.activeDevices]);
  const save = () =>
    void action.run("save", async () => {
      setDone(null);
      const budget: Record<string, number | null> = {};
      // Checked here in words; the host and the server check again.
      for (const { key, label } of FIELDS) budget[key] = parseLimit(form[key], label);
      onSaved(await api.saveAccountBudget(budget as unknown as AccountBudgetInput));
      setDone("Budget saved.");
    });
  const spent = data.budget.tokensPerMonth
    ? Math.min(100, Math.round((data.budget.tokensThisMonth / data.budget.tokensPerMonth) * 100))
    : null;
  return (
    <section className="connections-panel" aria-labelledby="usage-budget">
      <h3 id="usage-budget">Budget</h3>
      <p className="hint">
        Past a budget your agent stops and answers that the quota is spent. Empty: no limit
        {data.ceilings.tokensPerMonth !== null
          ? ` (the server allows at most ${number.format(data.ceilings.tokensPerMonth)} tokens a month)`
          : ""}
        .
      </p>
      {spent !== null && (
        <p className="usage-spent">
          <progress max={100} value={spent} aria-label="Tokens budget used" /> {spent} % of the tokens budget used
        </p>
      )}
      <form
        className="usage-budget-form"
        onSubmit={(event) => {
          event.preventDefault();
          save();
        }}
      >
        {FIELDS.map(({ key, label }) => (
          <InputField
            key={key}
            label={label}
            inputMode="numeric"
            value={form[key] ?? ""}
            onChange={(event) => setForm((previous) => ({ ...previous, [key]: event.target.value }))}
          />
        ))}
        <button type="submit" disabled={action.running !== null}>
          {action.running === "save" ? "Saving…" : "Save budget"}
        </button>
      </form>
      <ActionOutcome error={action.error} done={done} />
    </section>
  );
}

/** A limit typed in the form: empty is none; anything but a whole number is refused in words. */
function parseLimit(text: string | undefined, label: string): number | null {
  const value = text?.trim().replaceAll(",", "") ?? "";
  if (value !== "" && !/^\d+$/.test(value)) throw new Error(`${label}: a budget is a whole number, 0 or more (empty: no limit)`);
  return value === "" ? null : Number(value);
}

/** Each API key's and managed agent's own budget, one row each (the account's budget still caps them all). */
function ScopedBudgetsPanel({ api, data, onSaved }: { api: DesktopApi; data: UsageOverview; onSaved: (next: UsageOverview) => void }) {
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  if (data.scopedBudgets.length === 0) return null;
  return (
    <section className="connections-panel" aria-labelledby="usage-scoped-budgets">
      <h3 id="usage-scoped-budgets">Key and agent budgets</h3>
      <p className="hint">A key or an agent past its own budget stops, while the rest of the account goes on. Empty: no limit.</p>
      <ul className="usage-scoped-list">
        {data.scopedBudgets.map((item) => (
          <ScopedBudgetRow
            key={`${item.scope}:${item.scopeId}`}
            item={item}
            busy={action.running !== null}
            onSave={(tokensPerMonth, runsPerDay) =>
              void action.run(`${item.scope}:${item.scopeId}`, async () => {
                setDone(null);
                const tokens = parseLimit(tokensPerMonth, `${item.name}: tokens a month`);
                const runs = parseLimit(runsPerDay, `${item.name}: agent runs a day`);
                onSaved(await api.saveScopedBudget({ scope: item.scope, scopeId: item.scopeId, tokensPerMonth: tokens, runsPerDay: runs }));
                setDone(`Budget of ${item.name} saved.`);
              })
            }
          />
        ))}
      </ul>
      <ActionOutcome error={action.error} done={done} />
    </section>
  );
}

function ScopedBudgetRow({
  item,
  busy,
  onSave,
}: {
  item: ScopedBudgetItem;
  busy: boolean;
  onSave: (tokensPerMonth: string, runsPerDay: string) => void;
}) {
  const text = (value: number | null) => (value === null ? "" : String(value));
  const [tokens, setTokens] = useState(text(item.tokensPerMonth));
  const [runs, setRuns] = useState(text(item.runsPerDay));
  useEffect(() => {
    setTokens(text(item.tokensPerMonth));
    setRuns(text(item.runsPerDay));
  }, [item.tokensPerMonth, item.runsPerDay]);
  const what = item.scope === "apiKey" ? "API key" : "Agent";
  return (
    <li className="usage-scoped-row">
      <form
        aria-label={`${what} ${item.name}`}
        className="usage-budget-form"
        onSubmit={(event) => {
          event.preventDefault();
          onSave(tokens, runs);
        }}
      >
        <strong>
          {what} {item.name}
        </strong>
        <InputField label="Tokens a month" inputMode="numeric" value={tokens} onChange={(event) => setTokens(event.target.value)} />
        <InputField label="Agent runs a day" inputMode="numeric" value={runs} onChange={(event) => setRuns(event.target.value)} />
        <button type="submit" disabled={busy}>
          Save
        </button>
      </form>
    </li>
  );
}

function InvoicePanel({ data }: { data: UsageOverview }) {
  const { invoice } = data;
  return (
    <section className="connections-panel" aria-labelledby="usage-invoice">
      <h3 id="usage-invoice">Simulated invoice</h3>
      <table className="usage-table">
        <tbody>
          {invoice.lines.map((line) => (
            <tr key={`${line.description}:${line.unit}`}>
              <td>{line.description}</td>
              <td>
                {line.unit.startsWith("1M") ? number.format(Math.round(line.quantity * 1_000_000)) : number.format(line.quantity)}{" "}
                {line.unit.startsWith("1M") ? "tokens" : line.unit}
              </td>
              <td>{money(line.amount, invoice.currency)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row" colSpan={2}>
              Total
            </th>
            <td>{money(invoice.total, invoice.currency)}</td>
          </tr>
        </tfoot>
      </table>
    </section>
  );
}
