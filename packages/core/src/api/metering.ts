import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** Where a model call came from (`managed_agent` runs name their agent). */
export const METER_SOURCES = ["chat", "heartbeat", "agent_rpc", "guest", "managed_agent", "briefing", "summary"] as const;
export type MeterSource = (typeof METER_SOURCES)[number];

export const METER_GROUPS = ["model", "source", "apiKey", "agent", "device"] as const;
export type MeterGroup = (typeof METER_GROUPS)[number];

export const BUDGET_SCOPES = ["account", "apiKey", "agent", "device"] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

/** The largest budgets accepted: above these a value is a mistake, not a budget. */
export const MAX_BUDGET = { tokensPerMonth: 1_000_000_000_000, runsPerDay: 10_000_000, activeDevices: 100_000 } as const;
/** How far back a month may be asked for (usage and invoices), in months. */
export const METERING_HISTORY_MONTHS = 24;

const Count = z.number().int().min(0);

export const MeterTotals = z.object({
  tokensIn: Count,
  tokensOut: Count,
  totalTokens: Count,
  modelCalls: Count.describe("model calls (a run with tool steps makes several)"),
  runs: Count.describe("agent runs started"),
  toolCalls: Count,
  credits: Count.describe("`task_invite` Credits spent (given back ones not counted)"),
  activeDevices: Count.describe("devices that heartbeated, registered or acknowledged a delivery this month"),
});
export type MeterTotals = z.infer<typeof MeterTotals>;

export const MeterGroupTotals = MeterTotals.extend({
  key: z.string().describe("the group: `provider|model`, a source, an API key id, an agent id or a device id"),
  label: z.string().nullable().describe("an API key's label, a model's id; null otherwise"),
});
export type MeterGroupTotals = z.infer<typeof MeterGroupTotals>;

const Month = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/, { error: "must be a month as YYYY-MM, such as 2026-01" })
  .describe("a calendar month (UTC); default: this month");

export const MeteringUsage = z.object({
  month: z.string(),
  groupBy: z.enum(METER_GROUPS).nullable(),
  total: MeterTotals,
  groups: z.array(MeterGroupTotals).describe("empty without groupBy; the largest first"),
});
export type MeteringUsage = z.infer<typeof MeteringUsage>;

const Limit = (max: number) =>
  z
    .number({ error: "must be a whole number or null" })
    .int({ error: "must be a whole number" })
    .min(0, { error: "cannot be negative" })
    .max(max, { error: `cannot be more than ${max}` })
    .nullable();

export const BudgetInput = z.object({
  scope: z
    .enum(BUDGET_SCOPES)
    .describe(
      "`device` is refused (400 `invalid_budget`): no model run belongs to a device; cap devices with the account's `activeDevices`",
    ),
  scopeId: z.string().min(1).max(200).nullable().optional().describe("the API key id or agent id; none for the account"),
  tokensPerMonth: Limit(MAX_BUDGET.tokensPerMonth).optional().describe("input + output tokens per calendar month (UTC)"),
  runsPerDay: Limit(MAX_BUDGET.runsPerDay).optional().describe("agent runs per day (UTC)"),
  activeDevices: Limit(MAX_BUDGET.activeDevices).optional().describe("account scope only: devices active per month"),
});
export type BudgetInput = z.infer<typeof BudgetInput>;

const Limits = z.object({
  tokensPerMonth: z.number().int().nullable(),
  runsPerDay: z.number().int().nullable(),
  activeDevices: z.number().int().nullable(),
});

export const Budget = Limits.extend({
  id: z.string(),
  scope: z.enum(BUDGET_SCOPES),
  scopeId: z.string().nullable(),
  spent: z.object({ tokensThisMonth: Count, runsToday: Count, activeDevicesThisMonth: Count }),
  updatedAt: Timestamp,
});
export type Budget = z.infer<typeof Budget>;

export const InvoiceLine = z.object({
  description: z.string(),
  quantity: z.number(),
  unit: z.string().describe("`1M input tokens`, `1M output tokens`, `device`, `seat`"),
  note: z.string().optional().describe("why a line is what it is (the seat line: whose seats it counts)"),
  unitPrice: z.number(),
  amount: z.number().describe("rounded to the cent"),
});

export const Invoice = z.object({
  month: z.string(),
  currency: z.string(),
  lines: z.array(InvoiceLine),
  total: z.number(),
  rateCard: z.string().describe("where the rates came from: the operator's file, or `none` (every rate 0)"),
  simulated: z.literal(true).describe("nothing is charged"),
});
export type Invoice = z.infer<typeof Invoice>;

export const meteringRoutes = {
  getMeteringUsage: defineRoute({
    method: "GET",
    path: "/metering/usage",
    category: "metering",
    summary:
      "A month's meters (tokens, runs, tool calls, Credits, active devices), in total and by model, source, API key, agent or device",
    auth: "user",
    query: z.object({ month: Month.optional(), groupBy: z.enum(METER_GROUPS).optional() }),
    response: success({ usage: MeteringUsage }),
  }),
  getMeteringBudgets: defineRoute({
    method: "GET",
    path: "/metering/budgets",
    category: "metering",
    summary: "Your budgets per scope with what is spent against them, and the operator's ceilings",
    auth: "user",
    response: success({ budgets: z.array(Budget), ceilings: Limits.describe("the operator's per-account ceilings; null: none") }),
  }),
  putMeteringBudgets: defineRoute({
    method: "PUT",
    path: "/metering/budgets",
    category: "metering",
    summary: "Replaces your budgets (a key holding every scope only: a limited key cannot lift its own cap)",
    auth: "user",
    body: z.object({ budgets: z.array(BudgetInput).max(200) }),
    response: success({ budgets: z.array(Budget), ceilings: Limits }),
  }),
  getMeteringInvoice: defineRoute({
    method: "GET",
    path: "/metering/invoice",
    category: "metering",
    summary: "A month's simulated invoice: the operator's rate card applied to the meters (nothing is charged)",
    auth: "user",
    query: z.object({ month: Month.optional() }),
    response: success({ invoice: Invoice }),
  }),
} as const;
