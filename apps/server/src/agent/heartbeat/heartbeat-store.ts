import type { HeartbeatTier } from "@tandem/core";
import { type Kysely, type Selectable, type SqlBool, sql, type Transaction } from "kysely";
import type { HeartbeatActionsTable, HeartbeatRunsTable, Schema } from "../../db/schema";
import { notFound } from "../../http/errors";

/** Heartbeat runs and their actions: the rows, and how the API shows them. */

export type RunRow = Selectable<HeartbeatRunsTable>;
type ActionRow = Selectable<HeartbeatActionsTable>;
type Db = Kysely<Schema> | Transaction<Schema>;

export interface NewRun {
  readonly ownerId: number;
  readonly tier: HeartbeatTier;
  readonly source: "manual" | "schedule";
  readonly dryRun: boolean;
  readonly startedAt: string;
}

/**
 * Records a run as `running`, or answers null when the owner already has one running (on this or
 * any other server instance): the partial unique index on running runs is the per-user lock.
 */
export async function startRun(db: Db, run: NewRun): Promise<number | null> {
  const row = await db
    .insertInto("heartbeat_runs")
    .values({
      owner_id: run.ownerId,
      tier: run.tier,
      source: run.source,
      status: "running",
      dry_run: run.dryRun ? 1 : 0,
      started_at: run.startedAt,
    })
    // A literal predicate: both databases match it to the partial index only when it is not a parameter.
    .onConflict((oc) => oc.column("owner_id").where(sql<SqlBool>`status = 'running'`).doNothing())
    .returning("id")
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

export interface RunOutcome {
  readonly status: "completed" | "failed";
  readonly completedAt: string;
  readonly model: string | null;
  readonly text: string;
  readonly suppressed: boolean;
  readonly suppressReason: string | null;
  readonly delivered: boolean;
  readonly conversationId: number | null;
  readonly messageId: number | null;
  readonly toolCalls: number;
  readonly actionsCreated: number;
  readonly elapsedMs: number;
  readonly error: string | null;
}

/** A run paused on an escalation: no longer `running` (the owner's next heartbeat may start), not finished either. */
export async function markRequiresAction(db: Kysely<Schema>, runId: number): Promise<void> {
  await db
    .updateTable("heartbeat_runs")
    .set({ status: "requires_action" })
    .where("id", "=", runId)
    .where("status", "=", "running")
    .execute();
}

export async function finishRun(db: Kysely<Schema>, runId: number, outcome: RunOutcome): Promise<void> {
  await db
    .updateTable("heartbeat_runs")
    .set({
      status: outcome.status,
      completed_at: outcome.completedAt,
      model: outcome.model,
      text: outcome.text,
      suppressed: outcome.suppressed ? 1 : 0,
      suppress_reason: outcome.suppressReason,
      delivered: outcome.delivered ? 1 : 0,
      conversation_id: outcome.conversationId,
      message_id: outcome.messageId,
      tool_calls: outcome.toolCalls,
      actions_created: outcome.actionsCreated,
      elapsed_ms: outcome.elapsedMs,
      error: outcome.error,
    })
    .where("id", "=", runId)
    .execute();
}

export interface NewAction {
  readonly runId: number;
  readonly ownerId: number;
  readonly type: string;
  readonly mode: "message" | "action";
  readonly status: "executed" | "skipped" | "failed";
  readonly payload: unknown;
  readonly result: unknown;
  readonly createdAt: string;
}

export async function recordAction(db: Kysely<Schema>, action: NewAction): Promise<void> {
  await db
    .insertInto("heartbeat_actions")
    .values({
      run_id: action.runId,
      owner_id: action.ownerId,
      type: action.type,
      mode: action.mode,
      status: action.status,
      payload: JSON.stringify(action.payload ?? null),
      result: JSON.stringify(action.result ?? null),
      created_at: action.createdAt,
    })
    .execute();
}

const SUMMARY_CHARS = 200;

function summaryOf(row: RunRow): string {
  if (row.status === "failed") return row.error ?? "The run failed.";
  if (row.status === "running") return "Running…";
  const text = row.text
    .replace(/[*_`#]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return text.length <= SUMMARY_CHARS ? text : `${text.slice(0, SUMMARY_CHARS - 1).trimEnd()}…`;
}

export function runJson(row: RunRow) {
  return {
    id: Number(row.id),
    tier: row.tier,
    policy: row.tier,
    status: row.status,
    source: row.source,
    dryRun: row.dry_run === 1,
    startedAt: row.started_at,
    completedAt: row.completed_at,
    endedAt: row.completed_at,
    summary: summaryOf(row),
    text: row.text,
    suppressed: row.suppressed === 1,
    suppressReason: row.suppress_reason,
    delivered: row.delivered === 1,
    conversationId: row.conversation_id === null ? null : Number(row.conversation_id),
    messageId: row.message_id === null ? null : Number(row.message_id),
    toolCalls: row.tool_calls,
    actionsCreated: row.actions_created,
    model: row.model,
    elapsedMs: row.elapsed_ms,
    error: row.error,
  };
}

function actionJson(row: ActionRow) {
  return {
    id: Number(row.id),
    runId: Number(row.run_id),
    type: row.type,
    mode: row.mode,
    status: row.status,
    payload: JSON.parse(row.payload) as unknown,
    result: JSON.parse(row.result) as unknown,
    createdAt: row.created_at,
  };
}

export async function listRuns(db: Kysely<Schema>, ownerId: number, limit: number) {
  const rows = await db
    .selectFrom("heartbeat_runs")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .orderBy("started_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.map(runJson);
}

/** One of the owner's runs with its actions, oldest first; anyone else's, or none, is the same 404. */
export async function getRun(db: Kysely<Schema>, ownerId: number, runId: number) {
  const row = await db.selectFrom("heartbeat_runs").selectAll().where("id", "=", runId).where("owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound(`heartbeat run ${runId}`);
  const actions = await db.selectFrom("heartbeat_actions").selectAll().where("run_id", "=", runId).orderBy("id").execute();
  return { run: runJson(row), actions: actions.map(actionJson) };
}

export async function countRunsSince(db: Kysely<Schema>, ownerId: number, since: string): Promise<number> {
  const row = await db
    .selectFrom("heartbeat_runs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("owner_id", "=", ownerId)
    .where("started_at", ">=", since)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The messages heartbeats delivered to the owner since `since`, for suppressing near-repeats. */
export async function deliveredSince(db: Kysely<Schema>, ownerId: number, since: string) {
  return db
    .selectFrom("heartbeat_runs")
    .select(["text", "completed_at"])
    .where("owner_id", "=", ownerId)
    .where("delivered", "=", 1)
    .where("completed_at", ">=", since)
    .execute();
}

/** How many memory writes the owner's heartbeats made since `since`. */
export async function memoryWritesSince(db: Kysely<Schema>, ownerId: number, since: string): Promise<number> {
  const row = await db
    .selectFrom("heartbeat_actions")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("owner_id", "=", ownerId)
    .where("type", "=", "memory_write")
    .where("status", "=", "executed")
    .where("created_at", ">=", since)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Closes as failed every run still `running` that started before `startedBefore`: no run lasts
 * that long, so its server stopped (crashed) before it could record the end.
 */
export async function closeAbandonedRuns(db: Kysely<Schema>, startedBefore: string, now: string): Promise<number> {
  const result = await db
    .updateTable("heartbeat_runs")
    .set({ status: "failed", completed_at: now, error: "The server stopped during the run (it was found unfinished)." })
    .where("status", "=", "running")
    .where("started_at", "<", startedBefore)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deletes runs (and their actions) started before `before`. */
export async function pruneRuns(db: Kysely<Schema>, before: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const old = trx.selectFrom("heartbeat_runs").select("id").where("started_at", "<", before).where("status", "!=", "running");
    await trx.deleteFrom("heartbeat_actions").where("run_id", "in", old).execute();
    await trx.deleteFrom("heartbeat_runs").where("started_at", "<", before).where("status", "!=", "running").execute();
  });
}
