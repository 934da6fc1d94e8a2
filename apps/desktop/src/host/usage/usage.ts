import type { Budget, BudgetInput } from "@tandem/core";
import { z } from "zod";
import type { AccountBudgetInput, ScopedBudgetInput, ScopedBudgetItem, UsageOverview } from "../../shared/desktop-api";
import { connectionsCall, isRouteMissing } from "../connections/connections-call";
import type { UsageFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";

export const USAGE_OFFLINE =
  "Can't reach the server right now. Usage and budgets are kept on the server; try again once you are back online.";
export const BUDGETS_NOT_ALLOWED =
  "This desktop's key is limited, and only the account's owner (a key holding every scope) may change budgets. Sign in with such a key to change them here.";

const Limit = z.number().int({ error: "A budget is a whole number" }).min(0, { error: "A budget cannot be negative" }).nullable();
const AccountBudget = z.object({ tokensPerMonth: Limit, runsPerDay: Limit, activeDevices: Limit });
const ScopedBudget = z.object({
  scope: z.enum(["apiKey", "agent"]),
  scopeId: z.string().min(1).max(200),
  tokensPerMonth: Limit,
  runsPerDay: Limit,
});

const EMPTY: UsageOverview = {
  supported: false,
  month: "",
  total: { tokensIn: 0, tokensOut: 0, runs: 0, toolCalls: 0, activeDevices: 0 },
  byModel: [],
  bySource: [],
  devices: [],
  budget: { tokensPerMonth: null, runsPerDay: null, activeDevices: null, tokensThisMonth: 0, runsToday: 0 },
  otherBudgets: 0,
  scopedBudgets: [],
  ceilings: { tokensPerMonth: null, runsPerDay: null, activeDevices: null },
  invoice: { currency: "", lines: [], total: 0 },
};

/** A budget as PUT takes it back (unchanged). */
const asInput = (budget: Budget): BudgetInput => ({
  scope: budget.scope,
  ...(budget.scopeId ? { scopeId: budget.scopeId } : {}),
  tokensPerMonth: budget.tokensPerMonth,
  runsPerDay: budget.runsPerDay,
  ...(budget.scope === "account" ? { activeDevices: budget.activeDevices } : {}),
});

/** One row per API key (used this month or budgeted) and per managed agent, with its budget. */
function scopedBudgets(
  budgets: readonly Budget[],
  keys: readonly { id: string; name: string }[],
  agents: readonly { id: string; name: string }[],
): ScopedBudgetItem[] {
  const rows = new Map<string, ScopedBudgetItem>();
  const add = (scope: "apiKey" | "agent", id: string, name: string) => {
    const budget = budgets.find((b) => b.scope === scope && b.scopeId === id);
    rows.set(`${scope}:${id}`, {
      scope,
      scopeId: id,
      name,
      tokensPerMonth: budget?.tokensPerMonth ?? null,
      runsPerDay: budget?.runsPerDay ?? null,
      tokensThisMonth: budget?.spent.tokensThisMonth ?? 0,
      runsToday: budget?.spent.runsToday ?? 0,
    });
  };
  for (const key of keys) add("apiKey", key.id, key.name);
  for (const agent of agents) add("agent", agent.id, agent.name);
  for (const budget of budgets) {
    if ((budget.scope === "apiKey" || budget.scope === "agent") && budget.scopeId && !rows.has(`${budget.scope}:${budget.scopeId}`)) {
      add(budget.scope, budget.scopeId, budget.scopeId);
    }
  }
  return [...rows.values()];
}

/** The Usage section: the month's meters by model and source, devices, the account's budget and the invoice. */
export function createUsageFacet(session: SessionService): UsageFacet {
  const signedIn = () => {
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  const call = <T>(request: () => Promise<T>) => connectionsCall(request, USAGE_OFFLINE);

  async function overview(): Promise<UsageOverview> {
    const client = signedIn();
    try {
      const [byModel, bySource, byDevice, byKey, budgets, invoice, agents] = await Promise.all([
        call(() => client.call("getMeteringUsage", { query: { groupBy: "model" } })),
        call(() => client.call("getMeteringUsage", { query: { groupBy: "source" } })),
        call(() => client.call("getMeteringUsage", { query: { groupBy: "device" } })),
        call(() => client.call("getMeteringUsage", { query: { groupBy: "apiKey" } })),
        call(() => client.call("getMeteringBudgets")),
        call(() => client.call("getMeteringInvoice")),
        // A key without os.agents:read lists none: the agents already budgeted are still shown.
        client.call("listManagedAgents").then(
          (answer) => answer.agents,
          () => [],
        ),
      ]);
      const account = budgets.budgets.find((budget) => budget.scope === "account");
      const { total } = byModel.usage;
      return {
        supported: true,
        month: byModel.usage.month,
        total: {
          tokensIn: total.tokensIn,
          tokensOut: total.tokensOut,
          runs: total.runs,
          toolCalls: total.toolCalls,
          activeDevices: total.activeDevices,
        },
        byModel: byModel.usage.groups.map((g) => ({ name: g.label ?? g.key, tokensIn: g.tokensIn, tokensOut: g.tokensOut })),
        bySource: bySource.usage.groups.map((g) => ({ name: g.key, tokensIn: g.tokensIn, tokensOut: g.tokensOut })),
        devices: byDevice.usage.groups.filter((g) => g.activeDevices > 0).map((g) => g.key),
        budget: {
          tokensPerMonth: account?.tokensPerMonth ?? null,
          runsPerDay: account?.runsPerDay ?? null,
          activeDevices: account?.activeDevices ?? null,
          tokensThisMonth: total.tokensIn + total.tokensOut,
          runsToday: account?.spent.runsToday ?? 0,
        },
        otherBudgets: budgets.budgets.length - (account ? 1 : 0),
        scopedBudgets: scopedBudgets(
          budgets.budgets,
          byKey.usage.groups.map((g) => ({ id: g.key, name: g.label ?? g.key })),
          agents.map((agent) => ({ id: String(agent.id), name: agent.handle })),
        ),
        ceilings: budgets.ceilings,
        invoice: {
          currency: invoice.invoice.currency,
          lines: invoice.invoice.lines.map(({ description, quantity, unit, amount }) => ({ description, quantity, unit, amount })),
          total: invoice.invoice.total,
        },
      };
    } catch (error) {
      if (isRouteMissing(error)) return EMPTY;
      throw error;
    }
  }

  async function putBudgets(client: ReturnType<typeof signedIn>, budgets: BudgetInput[]): Promise<void> {
    try {
      await call(() => client.call("putMeteringBudgets", { body: { budgets } }));
    } catch (error) {
      if ((error as { body?: { error?: string } }).body?.error === "owner_only") throw new Error(BUDGETS_NOT_ALLOWED, { cause: error });
      throw error;
    }
  }

  return {
    getUsage: overview,
    async saveScopedBudget(input: ScopedBudgetInput) {
      const budget = parseInput("saveScopedBudget", ScopedBudget, input);
      const client = signedIn();
      const { budgets } = await call(() => client.call("getMeteringBudgets"));
      const others = budgets.filter((b) => !(b.scope === budget.scope && b.scopeId === budget.scopeId)).map(asInput);
      const own = budget.tokensPerMonth !== null || budget.runsPerDay !== null ? [budget] : [];
      await putBudgets(client, [...others, ...own]);
      return overview();
    },
    async saveAccountBudget(input: AccountBudgetInput) {
      const budget = parseInput("saveAccountBudget", AccountBudget, input);
      const client = signedIn();
      const { budgets } = await call(() => client.call("getMeteringBudgets"));
      const others = budgets.filter((b) => b.scope !== "account").map(asInput);
      const account = Object.values(budget).some((value) => value !== null) ? [{ scope: "account" as const, ...budget }] : [];
      await putBudgets(client, [...account, ...others]);
      return overview();
    },
  };
}
