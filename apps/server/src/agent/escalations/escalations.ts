import { type Escalation, type EscalationSourceType, STOPPED_BY_OWNER } from "@tandem/core";
import type { ModelMessage } from "ai";
import type { Kysely, Selectable } from "kysely";
import type { AppContext } from "../../context";
import type { EscalationsTable, PausedRunsTable, Schema } from "../../db/schema";
import { canonicalHash } from "../../delegation/grants/canonical-hash";
import type { EventBatch } from "../../delegation/realtime/event-log";
import { conflict, notFound } from "../../http/errors";
import { newId } from "../../ids";
import { enqueueEscalationRequested, enqueueEscalationResolved } from "../../webhooks/webhook-outbox";
import { type AgentRunRequest, type AgentRunResult, type PendingCall, runAgent } from "../runner/agent-runner";
import { findTool } from "../tools/registry";
import { type CallGuard, ToolFailure } from "../tools/to-ai-tools";

// Escalations (docs/escalations.md): a run that calls a tool whose decision is `ask` pauses (the AI
// SDK's `needsApproval`); the run's messages and its source's context are stored (`paused_runs`) and
// each waiting call becomes an escalation. The owner's continue / stop is claimed by one conditional
// UPDATE; once no call of the run is pending, one instance claims the run (another conditional
// UPDATE) and resumes it with the SDK's approval responses. The resume claims the approved calls'
// one execution each (a third conditional UPDATE, made while the run's request is rebuilt); each
// recorded call runs through a guard that records its outcome before the model sees it.

type EscalationRow = Selectable<EscalationsTable>;
type PausedRunRow = Selectable<PausedRunsTable>;
export type OwnSourceType = Exclude<EscalationSourceType, "bridge">;

/** What a source needs to rebuild and finish one of its runs, on any instance, from its stored context. */
export interface EscalationSource<C = unknown> {
  readonly type: OwnSourceType;
  /**
   * The request to resume with (model, grant, instructions, wrapTool, toolDecision…), rebuilt from
   * `context` exactly as the first run had it; everything but `messages`, `signal`, `canPause` and
   * `guardCall`, which the resume sets.
   */
  prepare(app: AppContext, context: C): Promise<Omit<AgentRunRequest, "messages" | "signal" | "canPause" | "guardCall">>;
  /** The resumed run ended (completed, failed, or paused again: then `paused` holds the new escalations' ids). */
  finish(app: AppContext, context: C, result: AgentRunResult, paused: { runId: string } | null): Promise<void>;
  /** A resume that was claimed but never finished (its instance died): the run is over, recorded as failed. */
  abandon(app: AppContext, context: C): Promise<void>;
  /** Who is asking, in a few words ("Your heartbeat", "bob's agent"), for the summary. */
  describe(app: AppContext, context: C): Promise<string>;
}

const sources = new Map<OwnSourceType, EscalationSource<never>>();

/**
 * Registers a source of paused runs (heartbeat, agent RPC, managed agents): the one call a new
 * kind of run needs besides `pauseRun`. Idempotent per type.
 */
export function registerEscalationSource<C>(source: EscalationSource<C>): void {
  sources.set(source.type, source as EscalationSource<never>);
}

function sourceOf(type: OwnSourceType): EscalationSource<unknown> {
  const source = sources.get(type);
  if (!source) throw new Error(`no escalation source registered for ${type}`);
  return source as EscalationSource<unknown>;
}

const ARGUMENT_PREVIEW_CHARS = 160;

function preview(args: unknown): string {
  const text = JSON.stringify(args ?? {}) ?? "{}";
  return text.length > ARGUMENT_PREVIEW_CHARS ? `${text.slice(0, ARGUMENT_PREVIEW_CHARS - 1)}…` : text;
}

function describeCall(who: string, call: PendingCall): { summary: string; consequence: string } {
  const tool = findTool(call.toolName);
  const action = call.toolName.replace(/_/g, " ");
  const summary = `${who} wants to ${action} with ${preview(call.input)}.`;
  const consequence =
    tool?.readWrite === "read"
      ? `Continue lets it read this (${action}) once; stop tells it no.`
      : `Continue runs ${call.toolName} once with exactly these arguments, changing your data; stop tells it no.`;
  return { summary, consequence };
}

export function toEscalation(row: EscalationRow): Escalation {
  return {
    id: row.id,
    kind: "tool_call",
    source: { type: row.source_type, id: row.source_id },
    runId: row.run_id,
    toolName: row.tool_name,
    summary: row.summary,
    consequence: row.consequence,
    argumentsHash: row.arguments_hash,
    status: row.status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    decidedAt: row.decided_at,
    decidedBy: row.decided_by,
  };
}

/**
 * Stores a run that ended `requires_action` (its messages and its source's context) and one
 * pending escalation per waiting call, with the owner's stream events and webhooks, in one
 * transaction. Answers the escalations. This and {@link registerEscalationSource} are all a
 * source calls: resuming is done here, on whichever instance claims the run.
 */
export async function pauseRun<C>(
  app: AppContext,
  input: { ownerId: number; source: EscalationSource<C>; sourceId: string; context: C; result: AgentRunResult },
): Promise<{ runId: string; escalations: Escalation[] }> {
  const paused = input.result.paused;
  if (!paused) throw new Error("pauseRun needs a run that ended requires_action");
  const { clock } = app;
  const runId = newId("run");
  const now = clock.iso();
  const expiresAt = clock.isoIn(app.config.escalationTtlMs);
  const who = await input.source.describe(app, input.context);
  const rows = paused.calls.map((call) => ({
    id: newId("esc"),
    owner_id: input.ownerId,
    run_id: runId,
    kind: "tool_call" as const,
    source_type: input.source.type,
    source_id: input.sourceId,
    tool_name: call.toolName,
    tool_call_id: call.toolCallId,
    approval_id: call.approvalId,
    ...describeCall(who, call),
    arguments: JSON.stringify(call.input ?? {}),
    arguments_hash: canonicalHash(call.input ?? {}),
    status: "pending" as const,
    created_at: now,
    expires_at: expiresAt,
    decided_at: null,
    decided_by: null,
    tool_state: null,
    tool_result: null,
  }));
  const events = app.realtime.batch();
  await app.db.transaction().execute(async (tx) => {
    await tx
      .insertInto("paused_runs")
      .values({
        id: runId,
        owner_id: input.ownerId,
        source_type: input.source.type,
        source_id: input.sourceId,
        context: JSON.stringify(input.context),
        messages: JSON.stringify(paused.messages),
        status: "waiting",
        resume_started_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await tx.insertInto("escalations").values(rows).execute();
    for (const row of rows) {
      const escalation = toEscalation(row);
      await events.appendToUserStream(tx, input.ownerId, "escalation.requested", { escalation });
      await enqueueEscalationRequested(tx, events, clock, input.ownerId, {
        escalationId: row.id,
        runId,
        tool: row.tool_name,
        summary: row.summary,
        expiresAt,
      });
    }
  });
  events.publish();
  return { runId, escalations: rows.map(toEscalation) };
}

// ---- Reading and deciding ----

export async function findOwnEscalation(db: Kysely<Schema>, ownerId: number, id: string): Promise<EscalationRow> {
  const row = await db.selectFrom("escalations").selectAll().where("id", "=", id).where("owner_id", "=", ownerId).executeTakeFirst();
  // Another owner's escalation is as absent as one that never was.
  if (!row) throw notFound(`escalation ${id}`);
  return row;
}

export async function listOwnEscalations(
  db: Kysely<Schema>,
  ownerId: number,
  filter: { status?: Escalation["status"]; limit: number },
): Promise<Escalation[]> {
  let query = db
    .selectFrom("escalations")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(filter.limit);
  if (filter.status) query = query.where("status", "=", filter.status);
  return (await query.execute()).map(toEscalation);
}

/** Writes the resolved event (stream and webhook) inside the decision's transaction. */
async function announceResolved(tx: Kysely<Schema>, events: EventBatch, app: AppContext, row: EscalationRow): Promise<void> {
  const escalation = toEscalation(row);
  await events.appendToUserStream(tx, row.owner_id, "escalation.resolved", { escalation });
  const decision = row.status === "continued" ? "continue" : row.status === "stopped" ? "stop" : "expired";
  await enqueueEscalationResolved(tx, events, app.clock, row.owner_id, {
    escalationId: row.id,
    decision,
    resolvedAt: row.decided_at ?? app.clock.iso(),
  });
}

/**
 * Claims the decision: one UPDATE from `pending` (and not yet due) to the decided status. Of two
 * resolves at once, on one instance or two, exactly one changes the row; the other reads it
 * decided and answers 409. Nothing runs here: the run is resumed after the commit.
 */
export async function decideEscalation(app: AppContext, ownerId: number, id: string, decision: "continue" | "stop"): Promise<Escalation> {
  const { db, clock } = app;
  const now = clock.iso();
  const events = app.realtime.batch();
  const claimed = await db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable("escalations")
      .set({ status: decision === "continue" ? "continued" : "stopped", decided_at: now, decided_by: String(ownerId) })
      .where("id", "=", id)
      .where("owner_id", "=", ownerId)
      .where("status", "=", "pending")
      .where("expires_at", ">", now)
      .returningAll()
      .executeTakeFirst();
    if (row) await announceResolved(tx, events, app, row);
    return row;
  });
  if (!claimed) {
    // Another owner's (or no) escalation is a 404 here, after the UPDATE that could not touch it.
    const current = await findOwnEscalation(db, ownerId, id);
    if (current.status === "pending" || current.status === "expired") {
      // Due but not yet swept: expire it now (the same conditional update the sweep makes).
      if (current.status === "pending") await expireEscalation(app, current);
      throw conflict("expired", `Escalation ${id} expired before it was resolved; it counts as stop`);
    }
    throw conflict("already_resolved", `Escalation ${id} is already resolved (${current.status})`);
  }
  events.publish();
  scheduleResume(app, claimed.run_id);
  return toEscalation(claimed);
}

async function expireEscalation(app: AppContext, row: Pick<EscalationRow, "id" | "run_id">): Promise<boolean> {
  const now = app.clock.iso();
  const events = app.realtime.batch();
  const expired = await app.db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable("escalations")
      .set({ status: "expired", decided_at: now, decided_by: "expiry" })
      .where("id", "=", row.id)
      .where("status", "=", "pending")
      .where("expires_at", "<=", now)
      .returningAll()
      .executeTakeFirst();
    if (updated) await announceResolved(tx, events, app, updated);
    return updated;
  });
  if (!expired) return false;
  events.publish();
  scheduleResume(app, row.run_id);
  return true;
}

// ---- Resuming ----

interface Resumes {
  readonly stopping: AbortController;
  readonly going: Set<Promise<void>>;
}
const resumesByApp = new WeakMap<AppContext, Resumes>();

function resumesOf(app: AppContext): Resumes {
  let resumes = resumesByApp.get(app);
  if (!resumes) {
    resumes = { stopping: new AbortController(), going: new Set() };
    resumesByApp.set(app, resumes);
  }
  return resumes;
}

/** Resumes the run in the background when nothing of it is pending (and this instance wins its claim). */
function scheduleResume(app: AppContext, runId: string): void {
  const resumes = resumesOf(app);
  if (resumes.stopping.signal.aborted) return;
  const going: Promise<void> = resumeRun(app, runId)
    .then(() => undefined)
    .catch((error) => app.logger.error({ err: error, runId }, "escalated run could not be resumed"))
    .finally(() => resumes.going.delete(going));
  resumes.going.add(going);
}

/** Ends this instance's resumes (their runs are cancelled; the sweep of another start finds them). */
export async function stopEscalations(app: AppContext): Promise<void> {
  const resumes = resumesOf(app);
  resumes.stopping.abort();
  await Promise.allSettled([...resumes.going]);
}

/** What the recorded call's guard stores: what the model is shown of its one execution. */
type RecordedOutcome = { ok: true; value: unknown } | { ok: false; error: string };

const UNKNOWN_OUTCOME = "the server stopped while this call ran; it was not run again and its outcome is unknown";

/**
 * Claims the approved calls' one execution each: `tool_state` goes null → `running` by one
 * conditional UPDATE (only a continued escalation), so of any number of resumes exactly one runs
 * each tool. Made as soon as the run is claimed, beside rebuilding its request, so the call does
 * not wait for its claim when the SDK reaches it. Answers the ids this resume claimed.
 */
async function claimCalls(app: AppContext, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const claimed = await app.db
    .updateTable("escalations")
    .set({ tool_state: "running" })
    .where("id", "in", ids)
    .where("status", "=", "continued")
    .where("tool_state", "is", null)
    .returning("id")
    .execute();
  return new Set(claimed.map((row) => row.id));
}

/**
 * The recorded call's one execution: only the resume whose {@link claimCalls} claimed it runs the
 * tool; its outcome is stored (`done`) before the model sees it. A later resume of the same run
 * (its instance died after the tool ran) replays the stored outcome; one that finds `running` (the
 * instance died while the tool ran, or before it) does not run it again and tells the model the
 * outcome is unknown.
 */
function onceGuard(app: AppContext, escalationId: string, claimed: boolean): CallGuard {
  const { db } = app;
  const replay = (stored: string | null): unknown => {
    const outcome = (stored ? JSON.parse(stored) : { ok: false, error: UNKNOWN_OUTCOME }) as RecordedOutcome;
    if (outcome.ok) return outcome.value;
    throw new ToolFailure(outcome.error);
  };
  return async (run) => {
    if (!claimed) {
      const row = await db
        .selectFrom("escalations")
        .select(["tool_state", "tool_result"])
        .where("id", "=", escalationId)
        .executeTakeFirst();
      return replay(row?.tool_state === "done" ? row.tool_result : null);
    }
    let outcome: RecordedOutcome;
    try {
      outcome = { ok: true, value: await run() };
    } catch (error) {
      outcome = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    await db
      .updateTable("escalations")
      .set({ tool_state: "done", tool_result: JSON.stringify(outcome) })
      .where("id", "=", escalationId)
      .execute();
    return replay(JSON.stringify(outcome));
  };
}

type ToolCallPart = { type: "tool-call"; toolCallId: string; toolName: string; input: unknown };

/**
 * The stored messages with each decided call answered: the recorded arguments put back into the
 * call (checked against their hash: a mismatch is answered as a stop, failing closed), and one
 * tool message of the SDK's approval responses.
 */
function resumeMessages(run: PausedRunRow, decided: readonly EscalationRow[]): { messages: ModelMessage[]; approved: Set<string> } {
  const messages = JSON.parse(run.messages) as ModelMessage[];
  const approved = new Set<string>();
  const responses = decided.map((row) => {
    const args = JSON.parse(row.arguments) as unknown;
    let ok = row.status === "continued" && canonicalHash(args) === row.arguments_hash;
    for (const message of messages) {
      if (message.role !== "assistant" || typeof message.content === "string") continue;
      for (const part of message.content as { type: string }[]) {
        if (part.type !== "tool-call") continue;
        const call = part as ToolCallPart;
        if (call.toolCallId !== row.tool_call_id) continue;
        if (call.toolName !== row.tool_name) ok = false;
        call.input = args;
      }
    }
    if (ok) approved.add(row.tool_call_id);
    return {
      type: "tool-approval-response" as const,
      approvalId: row.approval_id,
      approved: ok,
      ...(ok ? {} : { reason: STOPPED_BY_OWNER }),
    };
  });
  return { messages: [...messages, { role: "tool", content: responses }], approved };
}

/**
 * Resumes a paused run once none of its escalations is pending: claims it (`waiting` →
 * `resuming`, conditional, so one instance of any number resumes it), runs it on with the
 * approval responses, and hands the result to its source. A run that pauses again is stored anew.
 */
export async function resumeRun(app: AppContext, runId: string): Promise<boolean> {
  const { db, clock } = app;
  const resumes = resumesOf(app);
  const now = clock.iso();
  const run = await db
    .updateTable("paused_runs")
    .set({ status: "resuming", resume_started_at: now, updated_at: now })
    .where("id", "=", runId)
    .where("status", "=", "waiting")
    .where((eb) => eb.not(eb.exists(eb.selectFrom("escalations").select("id").where("run_id", "=", runId).where("status", "=", "pending"))))
    .returningAll()
    .executeTakeFirst();
  if (!run) return false;
  const source = sourceOf(run.source_type);
  const context = JSON.parse(run.context) as unknown;
  let status: "done" | "failed" = "failed";
  try {
    // The decided calls are read and the approved ones claimed while the request is rebuilt.
    const calls = db
      .selectFrom("escalations")
      .selectAll()
      .where("run_id", "=", runId)
      .orderBy("created_at")
      .orderBy("id")
      .execute()
      .then(async (decided) => {
        const resumed = resumeMessages(run, decided);
        const approvedRows = decided.filter((row) => resumed.approved.has(row.tool_call_id));
        const claimed = await claimCalls(
          app,
          approvedRows.map((row) => row.id),
        );
        return { ...resumed, approvedRows, claimed };
      });
    const [{ messages, approvedRows, claimed }, request] = await Promise.all([calls, source.prepare(app, context)]);
    const guards = new Map(approvedRows.map((row) => [row.tool_call_id, onceGuard(app, row.id, claimed.has(row.id))]));
    const result = await runAgent({
      ...request,
      messages,
      signal: resumes.stopping.signal,
      canPause: true,
      guardCall: (toolCallId) => guards.get(toolCallId),
    });
    let pausedAgain: { runId: string } | null = null;
    if (result.status === "requires_action") {
      pausedAgain = await pauseRun(app, { ownerId: Number(run.owner_id), source, sourceId: run.source_id, context, result });
    }
    await source.finish(app, context, result, pausedAgain);
    status = "done";
  } finally {
    await db.updateTable("paused_runs").set({ status, updated_at: clock.iso() }).where("id", "=", runId).execute();
  }
  return true;
}

// ---- The sweep ----

/** A resume still `resuming` this long after its time limit has no instance left to finish it. */
const ABANDONED_AFTER_LIMIT_MS = 60_000;

/**
 * The maintenance task (every instance): expires due escalations (a conditional UPDATE, so two
 * instances expire each once), resumes runs left `waiting` with nothing pending (a decision whose
 * instance stopped before resuming it: the claim makes it run once), and closes resumes whose
 * instance died mid-run as failed, without running them again.
 */
export async function sweepEscalations(app: AppContext): Promise<void> {
  const { db, clock, config } = app;
  const now = clock.iso();
  const due = await db
    .selectFrom("escalations")
    .select(["id", "run_id"])
    .where("status", "=", "pending")
    .where("expires_at", "<=", now)
    .limit(500)
    .execute();
  for (const row of due) await expireEscalation(app, row);
  const waiting = await db
    .selectFrom("paused_runs")
    .select("id")
    .where("status", "=", "waiting")
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom("escalations").select("id").whereRef("run_id", "=", "paused_runs.id").where("status", "=", "pending")),
      ),
    )
    .limit(100)
    .execute();
  for (const { id } of waiting) scheduleResume(app, id);
  const cutoff = new Date(clock.nowMs() - config.agentTimeoutMs - ABANDONED_AFTER_LIMIT_MS).toISOString();
  const abandoned = await db
    .updateTable("paused_runs")
    .set({ status: "failed", updated_at: now })
    .where("status", "=", "resuming")
    .where("resume_started_at", "<", cutoff)
    .returningAll()
    .execute();
  for (const run of abandoned) await sourceOf(run.source_type).abandon(app, JSON.parse(run.context));
}

/** Whether a tool decision of `ask` can pause runs of this source (its source is registered). */
export function canPauseFor(type: OwnSourceType): boolean {
  return sources.has(type);
}
