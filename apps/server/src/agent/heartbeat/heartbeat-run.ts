import type { HeartbeatTier, Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { enqueueWebhookEvent, summarize } from "../../webhooks/webhook-outbox";
import { appendMessages, createConversation, getOwnConversation } from "../conversations/conversation-store";
import { HEARTBEAT_RULES, heartbeatRequest } from "../prompt/heartbeat-request";
import { agentInstructions } from "../prompt/instructions";
import { newBlockNonce } from "../prompt/untrusted-blocks";
import { runAgent } from "../runner/agent-runner";
import { heartbeatGrant } from "../tools/run-grant";
import { runToolset } from "../tools/tool-namespaces";
import { type RunMeter, startRun } from "../usage/meters";
import { type RunActions, runActions } from "./heartbeat-actions";
import { ensureInstructions, readInstructions } from "./heartbeat-instructions";
import { readPolicy, setThread } from "./heartbeat-policy";
import { deliveredSince, finishRun, type RunOutcome } from "./heartbeat-store";
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

/**
 * One heartbeat pass, recorded from the moment it was claimed (the row is already `running`):
 * one agent turn over the owner's checklist with the tier's toolset, then the message delivered
 * unread to the heartbeat thread unless it nearly repeats one of the last 24 hours (or the run is
 * a dry run). Whatever happens, the run ends `completed` or `failed`, never left `running`.
 */
export async function executeHeartbeat(app: AppContext, request: HeartbeatRunRequest): Promise<void> {
  const started = Date.now();
  const actions = runActions(app, { id: request.runId, ownerId: request.ownerId, dryRun: request.dryRun });
  let outcome: RunOutcome;
  try {
    outcome = await pass(app, request, actions, started);
  } catch (error) {
    app.logger.error({ err: error, runId: request.runId }, "heartbeat run failed");
    outcome = failed(app, actions, started, null, "The server failed during the run.");
  }
  const events = app.realtime.batch();
  await app.db.transaction().execute(async (tx) => {
    await finishRun(tx, request.runId, outcome);
    await enqueueWebhookEvent(tx, events, app.clock, request.ownerId, "heartbeat.run.completed", {
      runId: request.runId,
      status: outcome.status,
      delivered: outcome.delivered,
      messageId: outcome.messageId,
      summary: summarize(outcome.error ?? outcome.text),
    });
  });
  events.publish();
}

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

async function pass(app: AppContext, request: HeartbeatRunRequest, actions: RunActions, started: number) {
  const { ownerId, tier } = request;
  const policy = await readPolicy(app.db, ownerId);
  const timezone = policy.schedule.timezone;
  // A dry run writes nothing, not even the default checklist.
  const checklist = request.dryRun ? await readInstructions(app, ownerId) : await ensureInstructions(app, ownerId);
  const model = app.models.resolve();
  const grant = heartbeatGrant(ownerId, tier, request.keyScopes);
  const offered = new Set((await runToolset(app.db, grant)).map((tool) => tool.name));
  const user = await app.db.selectFrom("users").select(["name", "username"]).where("id", "=", ownerId).executeTakeFirst();
  const refusals: Promise<void>[] = [];
  const blockNonce = newBlockNonce();
  // Counted against the owner's budgets before the model is called; a budget used up fails the run, saying which.
  let meter: RunMeter;
  try {
    meter = await startRun(app, { userId: ownerId, apiKeyId: request.apiKeyId }, { source: "heartbeat", model });
  } catch (error) {
    if (error instanceof ApiError && error.code === "budget_exceeded") return failed(app, actions, started, model.modelId, error.message);
    throw error;
  }

  const result = await runAgent({
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
    messages: [{ role: "user", content: heartbeatRequest(tier, checklist.instructions) }],
    signal: request.signal,
    wrapTool: actions.wrap,
    onStep: meter.onStep,
    onEvent: (event) => {
      // A tool the run does not have, called by name: the runner refused it; it is recorded too.
      if (event.type === "tool-call-end" && !event.ok && !offered.has(event.toolName)) refusals.push(actions.refused(event.toolName, tier));
    },
  });
  await Promise.all(refusals);
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
  if (request.dryRun) {
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
