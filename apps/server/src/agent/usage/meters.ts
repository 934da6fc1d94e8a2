// Metering: the one place usage is recorded, aggregated and checked against budgets
// (docs/metering.md). Every meter is a counter row per owner × period × dimension, grown by one
// `insert … on conflict do update set x = x + excluded.x` statement (atomic on SQLite and
// PostgreSQL, never read-then-write), so a month's usage is a read of a few rows however many
// events made it.

import type { BudgetScope, MeterSource } from "@tandem/core";
import { type Kysely, sql } from "kysely";
import { type Clock, nowIso } from "../../clock";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { inWriteUnit, type WriteUnit } from "../../delegation/grants/write-unit";
import { ApiError } from "../../http/errors";
import { enqueueBudgetThreshold } from "../../webhooks/webhook-outbox";

/** Who a metered event counts for: the owner, and the key, managed agent and device it came through. */
export interface MeterSubject {
  readonly userId: number;
  readonly apiKeyId?: string | null;
  /** A managed agent's id (source `managed_agent`). */
  readonly agentId?: string | null;
  /** A device's id (a runtime endpoint's `deviceId`). */
  readonly deviceId?: string | null;
}

export const monthOf = (iso: string) => iso.slice(0, 7);
export const dayOf = (iso: string) => iso.slice(0, 10);

/** What a model call's `purpose` (model_usage) counts as among the meters' sources. */
export function sourceOf(purpose: string): MeterSource | string {
  return purpose === "agent_message" ? "agent_rpc" : purpose;
}

const COUNTERS = ["tokens_in", "tokens_out", "model_calls", "runs", "tool_calls", "credits", "active_devices"] as const;
type CounterName = (typeof COUNTERS)[number];
type Delta = Partial<Record<CounterName, number>>;
export type CounterRow = { period: string; dim: string; dim_key: string } & Record<CounterName, number>;

/** A counter row as read (PostgreSQL's int8 may come back as text): its counters as numbers. */
function counterRow(row: { period: string; dim: string; dim_key: string } & Record<CounterName, number | string | bigint>): CounterRow {
  return { ...row, ...Object.fromEntries(COUNTERS.map((name) => [name, Number(row[name])])) } as CounterRow;
}

/** One counter row to grow: (period, dimension, key). */
type Cell = readonly [period: string, dim: string, key: string];

/** The dimensions an event of `subject` counts in (the account always). */
function dimsOf(subject: MeterSubject, extra: { source?: string; model?: string } = {}): [string, string][] {
  const dims: [string, string][] = [["account", ""]];
  if (extra.model !== undefined) dims.push(["model", extra.model]);
  if (extra.source !== undefined) dims.push(["source", extra.source]);
  if (subject.apiKeyId) dims.push(["apiKey", subject.apiKeyId]);
  if (subject.agentId) dims.push(["agent", subject.agentId]);
  if (subject.deviceId) dims.push(["device", subject.deviceId]);
  return dims;
}

/** Grows the counters of `cells` by `delta` in one statement; answers the rows as they now are. */
async function grow(db: Kysely<Schema>, ownerId: number, cells: readonly Cell[], delta: Delta, now: string): Promise<CounterRow[]> {
  const names = COUNTERS.filter((name) => delta[name] !== undefined);
  const values = cells.map(([period, dim, key]) => ({
    owner_id: ownerId,
    period,
    dim,
    dim_key: key,
    ...Object.fromEntries(names.map((name) => [name, delta[name] as number])),
    updated_at: now,
  }));
  const rows = await db
    .insertInto("meter_counters")
    .values(values)
    .onConflict((oc) =>
      oc.columns(["owner_id", "period", "dim", "dim_key"]).doUpdateSet((eb) => ({
        ...Object.fromEntries(names.map((name) => [name, eb(`meter_counters.${name}`, "+", eb.ref(`excluded.${name}`))])),
        updated_at: eb.ref("excluded.updated_at"),
      })),
    )
    .returning(["period", "dim", "dim_key", ...COUNTERS])
    .execute();
  return rows.map(counterRow);
}

// ---------------------------------------------------------------------------------------------
// Budgets

export type LimitName = "tokensPerMonth" | "runsPerDay" | "activeDevices";

/** One limit that applies to an event: a budget's (or the operator's ceiling's) value for one scope. */
export interface Limit {
  /** The budget row's id, or `operator` for the operator's ceilings. */
  readonly budgetId: string;
  readonly scope: BudgetScope;
  readonly scopeId: string;
  readonly name: LimitName;
  readonly limit: number;
}

const DIM_OF_SCOPE: Record<BudgetScope, string> = { account: "account", apiKey: "apiKey", agent: "agent", device: "device" };

/** The operator's ceilings (configuration), as limits on the account. */
export function ceilingsOf(config: AppContext["config"]): Limit[] {
  const limits: Limit[] = [];
  const add = (name: LimitName, limit: number | undefined) => {
    if (limit !== undefined) limits.push({ budgetId: "operator", scope: "account", scopeId: "", name, limit });
  };
  add("tokensPerMonth", config.maxTokensPerMonth);
  add("runsPerDay", config.maxRunsPerDay);
  add("activeDevices", config.maxActiveDevices);
  return limits;
}

/** Every limit (budgets of the subject's scopes, and the operator's ceilings) that applies to the subject. */
export async function limitsFor(db: Kysely<Schema>, config: AppContext["config"], subject: MeterSubject): Promise<Limit[]> {
  const scopes: [BudgetScope, string][] = [["account", ""]];
  if (subject.apiKeyId) scopes.push(["apiKey", subject.apiKeyId]);
  if (subject.agentId) scopes.push(["agent", subject.agentId]);
  const rows = await db
    .selectFrom("meter_budgets")
    .select(["id", "scope", "scope_id", "tokens_per_month", "runs_per_day", "active_devices"])
    .where("owner_id", "=", subject.userId)
    .where((eb) => eb.or(scopes.map(([scope, id]) => eb.and([eb("scope", "=", scope), eb("scope_id", "=", id)]))))
    .execute();
  const limits = ceilingsOf(config);
  for (const row of rows) {
    const base = { budgetId: row.id, scope: row.scope, scopeId: row.scope_id };
    if (row.tokens_per_month !== null) limits.push({ ...base, name: "tokensPerMonth", limit: Number(row.tokens_per_month) });
    if (row.runs_per_day !== null) limits.push({ ...base, name: "runsPerDay", limit: Number(row.runs_per_day) });
    if (row.active_devices !== null) limits.push({ ...base, name: "activeDevices", limit: Number(row.active_devices) });
  }
  return limits;
}

const UNIT: Record<LimitName, string> = {
  tokensPerMonth: "tokens this month",
  runsPerDay: "runs today",
  activeDevices: "active devices this month",
};

function describeLimit(limit: Limit): string {
  const owner = limit.budgetId === "operator" ? "the operator's ceiling" : "the budget";
  const scope = limit.scope === "account" ? "the account" : `${limit.scope} ${limit.scopeId}`;
  return `${owner} ${limit.name} of ${scope} (${limit.limit} ${UNIT[limit.name]})`;
}

/** The 402 of a request over a budget; "quota" in the message is what existing clients read as "cannot pay". */
export function budgetExceeded(limit: Limit): ApiError {
  return new ApiError(
    402,
    "budget_exceeded",
    `Budget exceeded: ${describeLimit(limit)} is used up; the quota renews next ${limit.name === "runsPerDay" ? "day" : "month"} (UTC) or when the owner raises it`,
  );
}

/** What a limit counts in a counter row. */
function spentOf(limit: Limit, row: CounterRow | undefined): number {
  if (!row) return 0;
  if (limit.name === "tokensPerMonth") return row.tokens_in + row.tokens_out;
  if (limit.name === "runsPerDay") return row.runs;
  return row.active_devices;
}

const periodOf = (name: LimitName, now: string) => (name === "runsPerDay" ? dayOf(now) : monthOf(now));

function rowFor(rows: readonly CounterRow[], limit: Limit, now: string): CounterRow | undefined {
  const period = periodOf(limit.name, now);
  const dim = DIM_OF_SCOPE[limit.scope];
  return rows.find((row) => row.period === period && row.dim === dim && row.dim_key === limit.scopeId);
}

const THRESHOLDS = [80, 100] as const;

/**
 * Announces the thresholds `spent` has reached, each once per period over all instances (the
 * notice row's primary key decides), on the owner's stream and as the `budget.threshold` webhook,
 * inside `unit` (the event's own transaction).
 */
async function announce(unit: WriteUnit, clock: Clock, ownerId: number, limit: Limit, spent: number, now: string): Promise<void> {
  if (spent <= 0) return;
  const period = periodOf(limit.name, now);
  for (const threshold of THRESHOLDS) {
    if (spent * 100 < limit.limit * threshold) continue;
    const budget = `${limit.budgetId}:${limit.scope}:${limit.scopeId}:${limit.name}`;
    const inserted = await unit.tx
      .insertInto("meter_notices")
      .values({ owner_id: ownerId, budget, period, threshold, created_at: now })
      .onConflict((oc) => oc.columns(["owner_id", "budget", "period", "threshold"]).doNothing())
      .returning("threshold")
      .executeTakeFirst();
    if (!inserted) continue;
    const summary = `${threshold} % of ${describeLimit(limit)} reached: ${spent} of ${limit.limit}`;
    const data = { budgetId: limit.budgetId, thresholdPercent: threshold, spent, limit: limit.limit, summary };
    await unit.events.appendToUserStream(unit.tx, ownerId, "budget.threshold", {
      ...data,
      scope: limit.scope,
      scopeId: limit.scopeId || null,
      budget: limit.name,
      period,
    });
    await enqueueBudgetThreshold(unit.tx, unit.events, clock, ownerId, data);
  }
}

/** Announces what `rows` reached and answers the first limit they exhausted (`spent >= limit`), if any. */
async function settle(
  unit: WriteUnit,
  clock: Clock,
  ownerId: number,
  limits: readonly Limit[],
  rows: readonly CounterRow[],
  now: string,
  names: readonly LimitName[],
) {
  let exhausted: Limit | undefined;
  for (const limit of limits) {
    if (!names.includes(limit.name)) continue;
    const spent = spentOf(limit, rowFor(rows, limit, now));
    await announce(unit, clock, ownerId, limit, spent, now);
    if (spent >= limit.limit) exhausted ??= limit;
  }
  return exhausted;
}

// ---------------------------------------------------------------------------------------------
// Model calls and runs

export interface ModelCall {
  readonly source: string;
  /** model_usage's `purpose` (default: the source). */
  readonly purpose?: string;
  readonly provider: string;
  readonly model: string;
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
  readonly toolCalls?: number;
  readonly at?: Date;
}

const tokenCount = (value: number | undefined) => (value !== undefined && Number.isFinite(value) && value > 0 ? Math.round(value) : 0);

/** Records one model call (its model_usage row and its counters) inside `tx`; answers the counters. */
export async function meterModelCall(tx: Kysely<Schema>, subject: MeterSubject, call: ModelCall): Promise<CounterRow[]> {
  const promptTokens = tokenCount(call.promptTokens);
  const completionTokens = tokenCount(call.completionTokens);
  const at = call.at?.toISOString() ?? nowIso();
  await tx
    .insertInto("model_usage")
    .values({
      user_id: subject.userId,
      api_key_id: subject.apiKeyId ?? null,
      agent_id: subject.agentId ?? null,
      device_id: subject.deviceId ?? null,
      purpose: call.purpose ?? call.source,
      provider: call.provider,
      model: call.model,
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      created_at: at,
    })
    .execute();
  const month = monthOf(at);
  const cells = dimsOf(subject, { source: call.source, model: `${call.provider}|${call.model}` }).map(
    ([dim, key]) => [month, dim, key] as const,
  );
  return grow(
    tx,
    subject.userId,
    cells,
    { tokens_in: promptTokens, tokens_out: completionTokens, model_calls: 1, tool_calls: call.toolCalls ?? 0 },
    at,
  );
}

/**
 * Records a model call made outside a run (a briefing, a summary) and announces the thresholds it
 * reached; answers the limit it exhausted, if any (the next call is refused by {@link checkBudgets}).
 */
export async function recordModelCall(app: AppContext, subject: MeterSubject, call: ModelCall): Promise<Limit | undefined> {
  return inWriteUnit(app, undefined, async (unit) => {
    const rows = await meterModelCall(unit.tx, subject, call);
    const limits = await limitsFor(unit.tx, app.config, subject);
    if (limits.length === 0) return undefined;
    return settle(unit, app.clock, subject.userId, limits, rows, call.at?.toISOString() ?? app.clock.iso(), ["tokensPerMonth"]);
  });
}

/** Reads the counters of the limits' cells (one query). */
async function readCells(db: Kysely<Schema>, ownerId: number, limits: readonly Limit[], now: string): Promise<CounterRow[]> {
  if (limits.length === 0) return [];
  const cells = limits.map((limit) => [periodOf(limit.name, now), DIM_OF_SCOPE[limit.scope], limit.scopeId] as const);
  const rows = await db
    .selectFrom("meter_counters")
    .select(["period", "dim", "dim_key", ...COUNTERS])
    .where("owner_id", "=", ownerId)
    .where((eb) =>
      eb.or(cells.map(([period, dim, key]) => eb.and([eb("period", "=", period), eb("dim", "=", dim), eb("dim_key", "=", key)]))),
    )
    .execute();
  return rows.map(counterRow);
}

/** Refuses (402 `budget_exceeded`) a model call outside a run when a tokens budget of the subject is used up. */
export async function checkBudgets(app: AppContext, subject: MeterSubject): Promise<void> {
  const limits = (await limitsFor(app.db, app.config, subject)).filter((limit) => limit.name === "tokensPerMonth");
  if (limits.length === 0) return;
  const now = app.clock.iso();
  const rows = await readCells(app.db, subject.userId, limits, now);
  for (const limit of limits) if (spentOf(limit, rowFor(rows, limit, now)) >= limit.limit) throw budgetExceeded(limit);
}

/** What a run is, for its meter. */
export interface RunKind {
  readonly source: string;
  /** model_usage's `purpose` (default: the source). */
  readonly purpose?: string;
  readonly model: { readonly provider: string; readonly modelId: string };
}

/** A run's meter: {@link startRun} counted the run; `onStep` (the runner's hook) records each step. */
export interface RunMeter {
  /**
   * Records one step's model call and tool calls; answers true when a tokens budget is now used
   * up, and the run stops at this step boundary (status `budget_exceeded`). Fails closed: a step
   * that cannot be recorded stops the run too.
   */
  readonly onStep: (step: { usage: { promptTokens: number; completionTokens: number }; toolCalls: number }) => Promise<boolean>;
}

/**
 * Before the model is called: refuses the run (402 `budget_exceeded`, nothing counted) when a
 * budget of any of the subject's scopes is used up, and otherwise counts it (runs per month and per
 * day). The day's run count grows first and the check reads the grown value in the same statement,
 * so of many runs racing at the edge exactly the allowed number start, on any number of instances.
 */
export async function startRun(app: AppContext, subject: MeterSubject, kind: RunKind): Promise<RunMeter> {
  await inWriteUnit(app, undefined, (unit) => admitRun(app, unit, subject, kind.source));
  return meterRun(app, subject, kind);
}

/**
 * {@link startRun}'s admission inside `unit`, for a caller that claims something of its own in the
 * same transaction (a manual heartbeat's run row): a run over budget throws 402 and the whole
 * transaction, the claim with it, rolls back. The run's meter is then {@link meterRun}.
 */
export async function admitRun(app: AppContext, unit: WriteUnit, subject: MeterSubject, source: string): Promise<void> {
  const now = app.clock.iso();
  const limits = await limitsFor(unit.tx, app.config, subject);
  const dims = dimsOf(subject, { source });
  const cells: Cell[] = [
    ...dims.map(([dim, key]) => [monthOf(now), dim, key] as const),
    // The day's rows only where a runs budget can be (not per source).
    ...dims.filter(([dim]) => dim !== "source").map(([dim, key]) => [dayOf(now), dim, key] as const),
  ];
  const rows = await grow(unit.tx, subject.userId, cells, { runs: 1 }, now);
  for (const limit of limits) {
    const spent = spentOf(limit, rowFor(rows, limit, now));
    if (limit.name === "runsPerDay" && spent > limit.limit) throw budgetExceeded(limit);
    if (limit.name === "tokensPerMonth" && spent >= limit.limit) throw budgetExceeded(limit);
  }
  await settle(unit, app.clock, subject.userId, limits, rows, now, ["runsPerDay"]);
}

/**
 * The meter of a run already admitted by {@link startRun} and going on (a run resumed after its
 * owner's decision on an escalation): not counted again; its steps are recorded, and a budget used
 * up meanwhile stops it at its next step boundary, as it would have without the pause.
 */
export function meterRun(app: AppContext, subject: MeterSubject, kind: RunKind): RunMeter {
  const { source } = kind;
  const call = { source, purpose: kind.purpose ?? source, provider: kind.model.provider, model: kind.model.modelId };
  return {
    onStep: async ({ usage, toolCalls }) => {
      try {
        const exhausted = await recordModelCall(app, subject, {
          ...call,
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          toolCalls,
        });
        return exhausted !== undefined;
      } catch (error) {
        app.logger.error({ err: error }, "metering a run's step failed; the run stops");
        return true;
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Credits and devices

/** Counts `delta` task_invite Credits (1 spent, -1 given back) inside the message's own transaction. */
export async function meterCredits(tx: Kysely<Schema>, clock: Clock, subject: MeterSubject, delta: number): Promise<void> {
  const now = clock.iso();
  await grow(
    tx,
    subject.userId,
    dimsOf(subject).map(([dim, key]) => [monthOf(now), dim, key] as const),
    { credits: delta },
    now,
  );
}

/**
 * Counts a device active this month (a heartbeat, a delivery ack, a registration), once however
 * often it is seen. With `admit` (registration), a device new this month is refused (402, the
 * transaction rolls back) when the account's device ceiling is reached: the account's row grows
 * only under `active_devices < ceiling`, a conditional update that holds across instances.
 */
export async function meterDevice(app: AppContext, unit: WriteUnit, ownerId: number, deviceId: string, admit = false): Promise<void> {
  const now = app.clock.iso();
  const month = monthOf(now);
  const fresh = await unit.tx
    .insertInto("meter_active_devices")
    .values({ owner_id: ownerId, month, device_id: deviceId, first_seen_at: now })
    .onConflict((oc) => oc.columns(["owner_id", "month", "device_id"]).doNothing())
    .returning("device_id")
    .executeTakeFirst();
  if (!fresh) return;
  const limits = (await limitsFor(unit.tx, app.config, { userId: ownerId })).filter((limit) => limit.name === "activeDevices");
  await grow(unit.tx, ownerId, [[month, "device", deviceId]], { active_devices: 1 }, now);
  await grow(unit.tx, ownerId, [[month, "account", ""]], {}, now);
  const ceiling = admit && limits.length > 0 ? limits.reduce((a, b) => (b.limit < a.limit ? b : a)) : undefined;
  const grown = await unit.tx
    .updateTable("meter_counters")
    .set((eb) => ({ active_devices: eb("active_devices", "+", 1), updated_at: now }))
    .where("owner_id", "=", ownerId)
    .where("period", "=", month)
    .where("dim", "=", "account")
    .where("dim_key", "=", "")
    .$if(ceiling !== undefined, (qb) => qb.where("active_devices", "<", ceiling?.limit ?? 0))
    .returning(["period", "dim", "dim_key", ...COUNTERS])
    .executeTakeFirst();
  if (!grown) {
    throw new ApiError(
      402,
      "budget_exceeded",
      `Device ceiling reached: ${describeLimit(ceiling as Limit)} is used up, so this device cannot register; the quota renews next month (UTC), or the owner raises it or uses a device already active this month`,
    );
  }
  await settle(unit, app.clock, ownerId, limits, [counterRow(grown)], now, ["activeDevices"]);
}

/** {@link meterDevice} in a transaction of its own (heartbeats). */
export function meterDeviceNow(app: AppContext, ownerId: number, deviceId: string): Promise<void> {
  return inWriteUnit(app, undefined, (unit) => meterDevice(app, unit, ownerId, deviceId));
}

// ---------------------------------------------------------------------------------------------
// Reading

export type MeterTotalsRow = Record<CounterName, number>;

/** A month's counter rows of one dimension (a handful of rows, whatever the number of events). */
export async function readCounters(db: Kysely<Schema>, ownerId: number, period: string, dim: string): Promise<CounterRow[]> {
  const rows = await db
    .selectFrom("meter_counters")
    .select(["period", "dim", "dim_key", ...COUNTERS])
    .where("owner_id", "=", ownerId)
    .where("period", "=", period)
    .where("dim", "=", dim)
    .execute();
  return rows.map(counterRow);
}

/** Folds model_usage rows into the counters (the benchmark's seeding of a million events; never in serving). */
export async function foldModelUsage(db: Kysely<Schema>, ownerId: number, month: string): Promise<void> {
  const now = new Date().toISOString();
  for (const [dim, key] of [
    ["account", sql<string>`''`],
    ["model", sql<string>`provider || '|' || model`],
    ["source", sql<string>`purpose`],
  ] as const) {
    await sql`
      insert into meter_counters (owner_id, period, dim, dim_key, tokens_in, tokens_out, model_calls, updated_at)
      select user_id, ${month}, ${dim}, ${key}, sum(prompt_tokens), sum(completion_tokens), count(*), ${now}
      from model_usage where user_id = ${ownerId} and created_at >= ${`${month}-01`} and created_at < ${`${month}-99`}
      group by user_id, ${key}
      on conflict (owner_id, period, dim, dim_key) do update set
        tokens_in = meter_counters.tokens_in + excluded.tokens_in,
        tokens_out = meter_counters.tokens_out + excluded.tokens_out,
        model_calls = meter_counters.model_calls + excluded.model_calls`.execute(db);
  }
}
