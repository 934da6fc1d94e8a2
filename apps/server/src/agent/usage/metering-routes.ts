import { readFileSync } from "node:fs";
import {
  ALL_SCOPES,
  type Budget,
  type BudgetInput,
  type BudgetScope,
  holdsScope,
  type Invoice,
  METERING_HISTORY_MONTHS,
  type MeterGroupTotals,
  type MeteringUsage,
  type MeterTotals,
  type meteringRoutes,
} from "@tandem/core";
import { z } from "zod";
import type { UserPrincipal } from "../../auth/principal";
import { ConfigError } from "../../config";
import type { AppContext } from "../../context";
import { ApiError, badRequest, forbidden } from "../../http/errors";
import type { RouteHandlers } from "../../http/router";
import { newId } from "../../ids";
import { ensureOwner } from "../../people/team/team-service";
import { type CounterRow, dayOf, type MeterTotalsRow, monthOf, readCounters } from "./meters";

/** The operator's rate card (`TANDEM_RATE_CARD_FILE`, docs/metering.md). */
const Price = z.number().min(0).max(1_000_000);
export const RateCard = z.object({
  currency: z.string().min(1).max(10).default("USD"),
  perSeat: Price.default(0),
  perActiveDevice: Price.default(0),
  /** Per million tokens, by `provider|model`, by model id, or `default`. */
  perMillionTokens: z.record(z.string(), z.object({ input: Price.default(0), output: Price.default(0) })).default({}),
});
export type RateCard = z.infer<typeof RateCard>;

/** Reads and checks the rate card at start: a server with a broken one does not start (and says why). */
export function loadRateCard(file: string | undefined): { card: RateCard; source: string } {
  if (!file) return { card: RateCard.parse({}), source: "none" };
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(`rateCardFile: cannot read ${file} as JSON (${(error as Error).message})`);
  }
  const parsed = RateCard.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(`rateCardFile: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  return { card: parsed.data, source: file };
}

/** A month the caller may ask about: not in the future, not more than the history back. */
function checkedMonth(app: AppContext, month: string | undefined): string {
  const current = monthOf(app.clock.iso());
  if (month === undefined) return current;
  const index = (m: string) => Number(m.slice(0, 4)) * 12 + Number(m.slice(5, 7)) - 1;
  if (index(month) > index(current)) throw badRequest("invalid_month", `month ${month} is in the future (this month is ${current})`);
  if (index(current) - index(month) > METERING_HISTORY_MONTHS) {
    throw badRequest("invalid_month", `month ${month} is more than ${METERING_HISTORY_MONTHS} months back; meters are kept that long`);
  }
  return month;
}

function totalsOf(row: MeterTotalsRow | undefined): MeterTotals {
  const r = row ?? { tokens_in: 0, tokens_out: 0, model_calls: 0, runs: 0, tool_calls: 0, credits: 0, active_devices: 0 };
  return {
    tokensIn: r.tokens_in,
    tokensOut: r.tokens_out,
    totalTokens: r.tokens_in + r.tokens_out,
    modelCalls: r.model_calls,
    runs: r.runs,
    toolCalls: r.tool_calls,
    credits: Math.max(0, r.credits),
    activeDevices: r.active_devices,
  };
}

/** The month's usage of one owner: the total, and the groups of one dimension. */
export async function readUsage(
  app: AppContext,
  ownerId: number,
  month: string,
  groupBy: MeteringUsage["groupBy"],
): Promise<MeteringUsage> {
  const [account] = await readCounters(app.db, ownerId, month, "account");
  let groups: MeterGroupTotals[] = [];
  if (groupBy) {
    const rows = await readCounters(app.db, ownerId, month, groupBy);
    const labels = new Map<string, string | null>();
    if (groupBy === "apiKey" && rows.length > 0) {
      const keys = await app.db
        .selectFrom("api_keys")
        .select(["id", "label"])
        .where("user_id", "=", ownerId)
        .where(
          "id",
          "in",
          rows.map((row) => row.dim_key),
        )
        .execute();
      for (const key of keys) labels.set(key.id, key.label);
    }
    const labelOf = (row: CounterRow) =>
      groupBy === "model" ? row.dim_key.slice(row.dim_key.indexOf("|") + 1) : (labels.get(row.dim_key) ?? null);
    groups = rows
      .map((row) => ({ key: row.dim_key, label: labelOf(row), ...totalsOf(row) }))
      .sort((a, b) => b.totalTokens - a.totalTokens || b.runs - a.runs || b.activeDevices - a.activeDevices || a.key.localeCompare(b.key));
  }
  return { month, groupBy: groupBy ?? null, total: totalsOf(account), groups };
}

const LIMIT_FIELDS = ["tokensPerMonth", "runsPerDay", "activeDevices"] as const;

async function listBudgets(app: AppContext, ownerId: number): Promise<Budget[]> {
  const rows = await app.db
    .selectFrom("meter_budgets")
    .selectAll()
    .where("owner_id", "=", ownerId)
    // A device budget caps nothing and can no longer be set; one stored before is not shown (the next PUT drops it).
    .where("scope", "!=", "device")
    .orderBy("scope")
    .orderBy("scope_id")
    .execute();
  if (rows.length === 0) return [];
  const now = app.clock.iso();
  const counters = await app.db
    .selectFrom("meter_counters")
    .select(["period", "dim", "dim_key", "tokens_in", "tokens_out", "runs", "active_devices"])
    .where("owner_id", "=", ownerId)
    .where("period", "in", [monthOf(now), dayOf(now)])
    .where(
      "dim",
      "in",
      rows.map((row) => row.scope),
    )
    .execute();
  const cell = (period: string, dim: string, key: string) =>
    counters.find((c) => c.period === period && c.dim === dim && c.dim_key === key);
  return rows.map((row) => {
    const month = cell(monthOf(now), row.scope, row.scope_id);
    const day = cell(dayOf(now), row.scope, row.scope_id);
    return {
      id: row.id,
      scope: row.scope,
      scopeId: row.scope === "account" ? null : row.scope_id,
      tokensPerMonth: row.tokens_per_month === null ? null : Number(row.tokens_per_month),
      runsPerDay: row.runs_per_day === null ? null : Number(row.runs_per_day),
      activeDevices: row.active_devices === null ? null : Number(row.active_devices),
      spent: {
        tokensThisMonth: Number(month?.tokens_in ?? 0) + Number(month?.tokens_out ?? 0),
        runsToday: Number(day?.runs ?? 0),
        activeDevicesThisMonth: Number(month?.active_devices ?? 0),
      },
      updatedAt: row.updated_at,
    };
  });
}

function ceilingsView(app: AppContext) {
  const { maxTokensPerMonth, maxRunsPerDay, maxActiveDevices } = app.config;
  return { tokensPerMonth: maxTokensPerMonth ?? null, runsPerDay: maxRunsPerDay ?? null, activeDevices: maxActiveDevices ?? null };
}

/** Only the account's owner sets budgets: a key holding every scope, never a limited key lifting its own cap. */
function requireOwner(principal: UserPrincipal): void {
  const scopes = principal.credential.scopes;
  if (ALL_SCOPES.some((scope) => !holdsScope(scopes, scope))) {
    throw forbidden("owner_only", "Only the account's owner (a key holding every scope) may set budgets; this key is limited");
  }
}

/** Checks the budgets asked for and that every scope they name is the caller's own (404 otherwise). */
async function checkedBudgets(app: AppContext, ownerId: number, budgets: readonly BudgetInput[]) {
  const ceilings = ceilingsView(app);
  const seen = new Set<string>();
  const checked: { scope: BudgetScope; scopeId: string; limits: Record<(typeof LIMIT_FIELDS)[number], number | null> }[] = [];
  for (const [index, budget] of budgets.entries()) {
    const where = `budgets[${index}]`;
    const scopeId = budget.scopeId ?? "";
    if (budget.scope === "account" && scopeId) throw badRequest("invalid_budget", `${where}: the account scope takes no scopeId`);
    if (budget.scope !== "account" && !scopeId) throw badRequest("invalid_budget", `${where}: a ${budget.scope} budget names its scopeId`);
    if (budget.scope === "device") {
      // No model run belongs to a device: a device token reaches only the runtime routes (its runs
      // are its own runtime's, on the computer), and a desktop signed in runs under its API key.
      throw badRequest(
        "invalid_budget",
        `${where}: a device budget would cap nothing, since the server runs no model for a device (a bridge's runs are its own runtime's; a signed-in desktop's runs count under its API key: budget that key with scope apiKey); cap devices with the account's activeDevices`,
      );
    }
    if (budget.scope !== "account" && budget.activeDevices != null) {
      throw badRequest("invalid_budget", `${where}: activeDevices is a budget of the account scope only`);
    }
    const id = `${budget.scope}:${scopeId}`;
    if (seen.has(id)) throw badRequest("invalid_budget", `${where}: the ${budget.scope} scope ${scopeId} is named twice`);
    seen.add(id);
    const limits = {
      tokensPerMonth: budget.tokensPerMonth ?? null,
      runsPerDay: budget.runsPerDay ?? null,
      activeDevices: budget.activeDevices ?? null,
    };
    for (const field of LIMIT_FIELDS) {
      const ceiling = ceilings[field];
      const value = limits[field];
      if (value !== null && ceiling !== null && value > ceiling) {
        throw badRequest("invalid_budget", `${where}.${field}: ${value} is above the operator's ceiling of ${ceiling}`);
      }
    }
    if (LIMIT_FIELDS.every((field) => limits[field] === null)) {
      throw badRequest(
        "invalid_budget",
        `${where}: set at least one of tokensPerMonth, runsPerDay, activeDevices (leave the scope out to remove its budget)`,
      );
    }
    if (budget.scope === "apiKey") {
      const key = await app.db
        .selectFrom("api_keys")
        .select("id")
        .where("id", "=", scopeId)
        .where("user_id", "=", ownerId)
        .executeTakeFirst();
      if (!key) throw new ApiError(404, "not_found", `${where}: API key ${scopeId} not found`);
    }
    if (budget.scope === "agent") {
      const agent = /^\d{1,15}$/.test(scopeId)
        ? await app.db
            .selectFrom("managed_agents")
            .select("id")
            .where("id", "=", Number(scopeId))
            .where("owner_id", "=", ownerId)
            .executeTakeFirst()
        : undefined;
      if (!agent) throw new ApiError(404, "not_found", `${where}: managed agent ${scopeId} not found`);
    }
    checked.push({ scope: budget.scope, scopeId, limits });
  }
  return checked;
}

async function replaceBudgets(app: AppContext, ownerId: number, budgets: readonly BudgetInput[]): Promise<void> {
  const checked = await checkedBudgets(app, ownerId, budgets);
  const now = app.clock.iso();
  await app.db.transaction().execute(async (tx) => {
    const existing = await tx.selectFrom("meter_budgets").select(["id", "scope", "scope_id"]).where("owner_id", "=", ownerId).execute();
    const wanted = new Set(checked.map((b) => `${b.scope}:${b.scopeId}`));
    const gone = existing.filter((row) => !wanted.has(`${row.scope}:${row.scope_id}`)).map((row) => row.id);
    if (gone.length > 0) await tx.deleteFrom("meter_budgets").where("id", "in", gone).execute();
    for (const budget of checked) {
      const values = {
        tokens_per_month: budget.limits.tokensPerMonth,
        runs_per_day: budget.limits.runsPerDay,
        active_devices: budget.limits.activeDevices,
        updated_at: now,
      };
      // The id stays with its scope across replacements (a threshold is announced once per period per budget).
      await tx
        .insertInto("meter_budgets")
        .values({ id: newId("bud"), owner_id: ownerId, scope: budget.scope, scope_id: budget.scopeId, created_at: now, ...values })
        .onConflict((oc) => oc.columns(["owner_id", "scope", "scope_id"]).doUpdateSet(values))
        .execute();
    }
  });
}

/**
 * The seats an account's invoice counts: the team's owner pays the team's people (every member, the
 * owner too; a pending invite is not a person yet), a member's seat is on the owner's invoice, and
 * an account not on the team is one seat of its own.
 */
async function seatsOf(app: AppContext, ownerId: number): Promise<{ quantity: number; note: string }> {
  await ensureOwner(app.db, app.clock.iso());
  const role = await app.db.selectFrom("team_members").select("role").where("user_id", "=", ownerId).executeTakeFirst();
  if (!role) return { quantity: 1, note: "this account (not on the team)" };
  if (role.role !== "owner") return { quantity: 0, note: "your seat is on the team owner's invoice" };
  const members = await app.db
    .selectFrom("team_members")
    .select((eb) => eb.fn.countAll<number | string>().as("n"))
    .executeTakeFirstOrThrow();
  return { quantity: Number(members.n), note: "the team's members (the owner too)" };
}

const cents = (amount: number) => Math.round(amount * 100) / 100;

export async function simulateInvoice(
  app: AppContext,
  rateCard: { card: RateCard; source: string },
  ownerId: number,
  month: string,
): Promise<Invoice> {
  const { card } = rateCard;
  const byModel = await readCounters(app.db, ownerId, month, "model");
  const [account] = await readCounters(app.db, ownerId, month, "account");
  const lines: Invoice["lines"] = [];
  const rateOf = (key: string) => {
    const model = key.slice(key.indexOf("|") + 1);
    return card.perMillionTokens[key] ?? card.perMillionTokens[model] ?? card.perMillionTokens.default ?? { input: 0, output: 0 };
  };
  for (const row of byModel.sort((a, b) => a.dim_key.localeCompare(b.dim_key))) {
    const rate = rateOf(row.dim_key);
    const model = row.dim_key.slice(row.dim_key.indexOf("|") + 1);
    for (const [tokens, side] of [
      [row.tokens_in, "input"],
      [row.tokens_out, "output"],
    ] as const) {
      if (tokens <= 0) continue;
      const quantity = tokens / 1e6;
      lines.push({
        description: `${model}: ${side} tokens`,
        quantity,
        unit: `1M ${side} tokens`,
        unitPrice: rate[side],
        amount: cents(quantity * rate[side]),
      });
    }
  }
  const devices = account?.active_devices ?? 0;
  if (devices > 0) {
    lines.push({
      description: "Active devices",
      quantity: devices,
      unit: "device",
      unitPrice: card.perActiveDevice,
      amount: cents(devices * card.perActiveDevice),
    });
  }
  const seats = await seatsOf(app, ownerId);
  lines.push({
    description: "Seats",
    quantity: seats.quantity,
    unit: "seat",
    unitPrice: card.perSeat,
    amount: cents(seats.quantity * card.perSeat),
    note: seats.note,
  });
  const total = cents(lines.reduce((sum, line) => sum + line.amount, 0));
  return { month, currency: card.currency, lines, total, rateCard: rateCard.source, simulated: true };
}

export function meteringHandlers(app: AppContext): RouteHandlers<keyof typeof meteringRoutes> {
  const rateCard = loadRateCard(app.config.rateCardFile);
  return {
    getMeteringUsage: async ({ input, principal }) => ({
      success: true,
      usage: await readUsage(app, principal.userId, checkedMonth(app, input.query.month), input.query.groupBy ?? null),
    }),
    getMeteringBudgets: async ({ principal }) => ({
      success: true,
      budgets: await listBudgets(app, principal.userId),
      ceilings: ceilingsView(app),
    }),
    putMeteringBudgets: async ({ input, principal }) => {
      requireOwner(principal);
      await replaceBudgets(app, principal.userId, input.body.budgets);
      return { success: true, budgets: await listBudgets(app, principal.userId), ceilings: ceilingsView(app) };
    },
    getMeteringInvoice: async ({ input, principal }) => ({
      success: true,
      invoice: await simulateInvoice(app, rateCard, principal.userId, checkedMonth(app, input.query.month)),
    }),
  };
}
