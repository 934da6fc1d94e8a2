import type { HeartbeatTier, Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { enqueueWebhookEvent, summarize } from "../../webhooks/webhook-outbox";
import { appendMessages, createConversation, getOwnConversation } from "../conversations/conversation-store";
import { type EscalationSource, pauseRun } from "../escalations/escalations";
import type { ResolvedModel } from "../models/model-catalog";
import { HEARTBEAT_RULES, heartbeatRequest } from "../prompt/heartbeat-request";
import { agentInstructions } from "../prompt/instructions";
import { newBlockNonce } from "../prompt/untrusted-blocks";
import { type AgentRunResult, runAgent } from "../runner/agent-runner";
import { heartbeatGrant } from "../tools/run-grant";
import { decisionsFrom } from "../tools/tool-decision";
import { runToolset } from "../tools/tool-namespaces";
import { meterRun, startRun } from "../usage/meters";
import { type RunActions, runActions } from "./heartbeat-actions";
import { ensureInstructions, readInstructions } from "./heartbeat-instructions";
import { readPolicy, setThread } from "./heartbeat-policy";
import { deliveredSince, finishRun, markRequiresAction, type RunOutcome } from "./heartbeat-store";
import { REPEAT_WINDOW_MS, repeatReason } from "./heartbeat-suppression";

export interface HeartbeatRunRequest {
  readonly runId: number;
  readonly ownerId: number;
  readonly tier: HeartbeatTier;
  readonly dryRun: boolean;
  /** The key a manual run was asked with (its tokens are counted under it); null for the scheduler. */
  readonly apiKeyId: string | null;
  /**
   * The run's tools never exceed these: a manual run's credential scopes, or a scheduled run's
   * (those of the credential that set the schedule).
   */
  readonly keyScopes: ReadonlySet<Scope>;
  /** Already counted against the budgets (a manual run, admitted with its row); else admitted here. */
  readonly admitted?: boolean;
  /** Aborted when the server stops. */
  readonly signal: AbortSignal;
}

const THREAD_TITLE = "Heartbeat";
const SENDER_LABEL = "Tandem heartbeat";

/** The owner's heartbeat thread, or null: nothing was delivered yet, or the owner deleted it. */
export async function currentThread(db: Kysely<Schema>, ownerId: number): Promise<number | null> {
  const { conversationId } = await readPolicy(db, ownerId);
  if (conversationId === null) return null;
  const existing = await getOwnConversation(db, ownerId, "agent", conversationId).catch(() => undefined);
  return existing?.id ?? null;
}

/** The owner's heartbeat thread, created (again, if the owner deleted it) when needed. */
async function heartbeatThread(app: AppContext, ownerId: number): Promise<number> {
  const existing = await currentThread(app.db, ownerId);
  if (existing !== null) return existing;
  const id = await createConversation(app.db, ownerId, "agent", THREAD_TITLE, app.clock.iso());
  await setThread(app.db, ownerId, id, app.clock.now());
  return id;
}

/** Why a run that did not complete failed, in words. */
function failureOf(status: string, error: string | undefined): string {
  if (status === "cancelled") return "The server stopped during the run.";
  return error ?? "The run did not complete.";
}

/** What a heartbeat run needs to be rebuilt on any instance (a paused run's stored context). */
interface HeartbeatContext {
  readonly runId: number;
  readonly ownerId: number;
  readonly tier: HeartbeatTier;
  readonly dryRun: boolean;
  readonly apiKeyId: string | null;
  readonly keyScopes: Scope[];
}

const meterSubject = (context: HeartbeatContext) => ({ userId: context.ownerId, apiKeyId: context.apiKeyId });

const contextOf = (request: HeartbeatRunRequest): HeartbeatContext => ({
  runId: request.runId,
  ownerId: request.ownerId,
  tier: request.tier,
  dryRun: request.dryRun,
  apiKeyId: request.apiKeyId,
  keyScopes: [...request.keyScopes],
});

/**
 * One heartbeat pass, recorded from the moment it was claimed (the row is already `running`):
 * one agent turn over the owner's checklist with the tier's toolset, then the message delivered
 * unread to the heartbeat thread unless it nearly repeats one of the last 24 hours (or the run is
 * a dry run). A tool the owner's heartbeat tool policy says `ask` for pauses the run
 * (`requires_action`, an escalation); otherwise the run ends `completed` or `failed`, never left `running`.
 */
export async function executeHeartbeat(app: AppContext, request: HeartbeatRunRequest): Promise<void> {
  const started = Date.now();
  const context = contextOf(request);
  const actions = runActions(app, { id: request.runId, ownerId: request.ownerId, dryRun: request.dryRun });
  let outcome: RunOutcome | "paused";
  try {
    const run = await runRequest(app, context, actions);
    // Counted against the owner's budgets before the model is called (a manual run was, with its row); a
    // budget used up fails a scheduled run, saying which.
    try {
      if (!request.admitted) await startRun(app, meterSubject(context), { source: "heartbeat", model: run.model });
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "budget_exceeded")) throw error;
      await recordOutcome(app, context, failed(app, actions, started, run.model.modelId, error.message));
      return;
    }
    const offered = new Set((await runToolset(app.db, run.grant)).map((tool) => tool.name));
    const refusals: Promise<void>[] = [];
    const result = await runAgent({
      ...run,
      messages: [{ role: "user", content: heartbeatRequest(context.tier, (await checklistOf(app, context)).instructions) }],
      signal: request.signal,
      canPause: true,
      onEvent: (event) => {
        // A tool the run does not have, called by name: the runner refused it; it is recorded too.
        if (event.type === "tool-call-end" && !event.ok && !offered.has(event.toolName))
          refusals.push(actions.refused(event.toolName, context.tier));
      },
    });
    await Promise.all(refusals);
    outcome = await afterRun(app, context, actions, started, run.model, result);
  } catch (error) {
    app.logger.error({ err: error, runId: request.runId }, "heartbeat run failed");
    outcome = failed(app, actions, started, null, "The server failed during the run.");
  }
  if (outcome !== "paused") await recordOutcome(app, context, outcome);
}

async function recordOutcome(app: AppContext, context: HeartbeatContext, outcome: RunOutcome): Promise<void> {
  const events = app.realtime.batch();
  await app.db.transaction().execute(async (tx) => {
    await finishRun(tx, context.runId, outcome);
    await enqueueWebhookEvent(tx, events, app.clock, context.ownerId, "heartbeat.run.completed", {
      runId: context.runId,
      status: outcome.status,
      delivered: outcome.delivered,
      messageId: outcome.messageId,
      summary: summarize(outcome.error ?? outcome.text),
    });
  });
  events.publish();
}

/** A dry run writes nothing, not even the default checklist. */
const checklistOf = (app: AppContext, context: HeartbeatContext) =>
  context.dryRun ? readInstructions(app, context.ownerId) : ensureInstructions(app, context.ownerId);

/** Ends a claimed run that may not go ahead: recorded as failed with `reason`; nothing is run or delivered. */
export async function refuseRun(app: AppContext, runId: number, reason: string): Promise<void> {
  await finishRun(app.db, runId, failed(app, { count: 0 }, Date.now(), null, reason));
}

function failed(app: AppContext, actions: { count: number }, started: number, model: string | null, error: string): RunOutcome {
  return {
    status: "failed",
    completedAt: app.clock.iso(),
    model,
    text: "",
    suppressed: false,
    suppressReason: null,
    delivered: false,
    conversationId: null,
    messageId: null,
    toolCalls: 0,
    actionsCreated: actions.count,
    elapsedMs: Date.now() - started,
    error,
  };
}

/** The run's request (everything but its messages), rebuilt the same way for a first run and a resume. */
async function runRequest(app: AppContext, context: HeartbeatContext, actions: RunActions) {
  const { ownerId, tier } = context;
  const [policy, user] = await Promise.all([
    readPolicy(app.db, ownerId),
    app.db.selectFrom("users").select(["name", "username"]).where("id", "=", ownerId).executeTakeFirst(),
  ]);
  const timezone = policy.schedule.timezone;
  const model = app.models.resolve();
  const grant = heartbeatGrant(ownerId, tier, new Set(context.keyScopes));
  const blockNonce = newBlockNonce();
  const run = {
    app,
    model,
    grant,
    timezone,
    instructions: `${agentInstructions({
      ownerName: user?.name || user?.username || "the owner",
      timezone,
      now: app.clock.now(),
      blockNonce,
    })}\n${HEARTBEAT_RULES}`,
    blockNonce,
    wrapTool: actions.wrap,
    toolDecision: decisionsFrom(policy.toolPolicy),
    // Each step recorded against the owner's budgets; one used up stops the run at the next step.
    onStep: meterRun(app, meterSubject(context), { source: "heartbeat", model }).onStep,
    onEvent: () => {},
  };
  return run;
}

/** What a finished (or paused) agent turn makes of the run: usage recorded, the message delivered or held. */
async function afterRun(
  app: AppContext,
  context: HeartbeatContext,
  actions: RunActions,
  started: number,
  model: ResolvedModel,
  result: AgentRunResult,
): Promise<RunOutcome | "paused"> {
  const { ownerId } = context;
  // Paused: the owner hears of it first. (The tokens were recorded step by step: `onStep`.)
  const paused = result.status === "requires_action";
  if (paused) await pauseRun(app, { ownerId, source: heartbeatEscalations, sourceId: String(context.runId), context, result });
  if (paused) {
    await markRequiresAction(app.db, context.runId);
    return "paused";
  }
  const timezone = (await readPolicy(app.db, ownerId)).schedule.timezone;
  const toolCalls = result.toolsUsed.length;
  if (result.status !== "completed" || actions.toolFailure) {
    const error = result.status !== "completed" ? failureOf(result.status, result.error) : (actions.toolFailure as string);
    return { ...failed(app, actions, started, model.modelId, error), text: result.text, toolCalls };
  }

  const text = result.text.trim();
  const since = new Date(app.clock.nowMs() - REPEAT_WINDOW_MS).toISOString();
  const suppressReason = repeatReason(text, await deliveredSince(app.db, ownerId, since), timezone, app.clock.now());
  let conversationId: number | null = null;
  let messageId: number | null = null;
  if (context.dryRun) {
    await actions.message("skipped", { text }, { reason: suppressReason ?? "a dry run sends nothing" });
  } else if (suppressReason) {
    await actions.message("skipped", { text }, { reason: suppressReason });
  } else {
    conversationId = await heartbeatThread(app, ownerId);
    [messageId = null] = await appendMessages(
      app.db,
      conversationId,
      [
        {
          role: "assistant",
          senderType: "agent",
          senderId: null,
          senderLabel: SENDER_LABEL,
          content: text,
          status: "complete",
          toolsUsed: result.toolsUsed,
          model: model.modelId,
          unread: true,
        },
      ],
      app.clock.iso(),
    );
    await actions.message("executed", { text }, { conversationId, messageId });
  }
  return {
    status: "completed",
    completedAt: app.clock.iso(),
    model: model.modelId,
    text,
    suppressed: suppressReason !== null,
    suppressReason,
    delivered: messageId !== null,
    conversationId,
    messageId,
    toolCalls,
    actionsCreated: actions.count,
    elapsedMs: Date.now() - started,
    error: null,
  } satisfies RunOutcome;
}

/**
 * Heartbeat runs as a source of escalations: a paused run is rebuilt from its context (the run id,
 * tier and the scopes it was capped to) and, once resumed, ends like any run (delivered, recorded,
 * `heartbeat.run.completed`).
 */
export const heartbeatEscalations: EscalationSource<HeartbeatContext> = {
  type: "heartbeat",
  async prepare(app, context) {
    const actions = runActions(app, { id: context.runId, ownerId: context.ownerId, dryRun: context.dryRun });
    resumedActions.set(context.runId, actions);
    return runRequest(app, context, actions);
  },
  async finish(app, context, result, paused) {
    const actions =
      resumedActions.get(context.runId) ?? runActions(app, { id: context.runId, ownerId: context.ownerId, dryRun: context.dryRun });
    resumedActions.delete(context.runId);
    if (paused) return;
    const outcome = await afterRun(app, context, actions, Date.now(), app.models.resolve(), result);
    if (outcome !== "paused") await recordOutcome(app, context, outcome);
  },
  async abandon(app, context) {
    resumedActions.delete(context.runId);
    await recordOutcome(app, context, failed(app, { count: 0 }, Date.now(), null, "The server stopped during the resumed run."));
  },
  async describe() {
    return "Your heartbeat";
  },
};

/** The action recorder of a resume going on in this process, from `prepare` to `finish`. */
const resumedActions = new Map<number, RunActions>();
