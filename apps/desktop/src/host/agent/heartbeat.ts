import {
  type HeartbeatAction,
  type HeartbeatRun,
  type MAX_HEARTBEAT_EVERY_MINUTES,
  type MAX_HEARTBEAT_INSTRUCTIONS_CHARS,
  type MIN_HEARTBEAT_EVERY_MINUTES,
  TandemApiError,
  type TandemClient,
} from "@tandem/core";
import { z } from "zod";
import {
  HEARTBEAT_CHECKLIST_MAX,
  HEARTBEAT_EVERY_MINUTES_MAX,
  HEARTBEAT_EVERY_MINUTES_MIN,
  type HeartbeatActionItem,
  type HeartbeatChecklist,
  type HeartbeatRunDetail,
  type HeartbeatRunItem,
  type HeartbeatSettings,
} from "../../shared/desktop-api";
import type { AgentFacet } from "../facets";
import type { SessionService } from "../host-context";
import { onServer } from "../on-server";
import { parseInput } from "../parse-input";
import { serverClient } from "../session/server-client";
import { AGENT_OFFLINE } from "./agent-messages";

// The renderer's limits are core's: these fail to compile if the two ever differ.
const checklistMax: typeof MAX_HEARTBEAT_INSTRUCTIONS_CHARS = HEARTBEAT_CHECKLIST_MAX;
const everyMin: typeof MIN_HEARTBEAT_EVERY_MINUTES = HEARTBEAT_EVERY_MINUTES_MIN;
const everyMax: typeof MAX_HEARTBEAT_EVERY_MINUTES = HEARTBEAT_EVERY_MINUTES_MAX;

/** A run is one agent turn, which a model may take its time over: the agent's own run time, as for a briefing. */
const RUN_TIMEOUT_MS = 150_000;
/** Runs listed: as many as the history shows. */
const RUN_PAGE = 30;
/** An action's arguments or answer past this are cut: the history shows what a tool did, not whole notes. */
const ACTION_TEXT_MAX = 4_000;

const ClockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/);
const SettingsInput = z.object({
  tier: z.enum(["MESSAGES", "ACTIONS"]).optional(),
  schedule: z
    .object({
      enabled: z.boolean().optional(),
      everyMinutes: z.number().int().min(everyMin).max(everyMax).optional(),
      quietHours: z.object({ start: ClockTime, end: ClockTime }).nullable().optional(),
      timezone: z.string().min(1).max(64).optional(),
    })
    .optional(),
});
const RunInput = z.object({ dryRun: z.boolean() });
const RunIdInput = z.object({ runId: z.number().int().positive() });
// Longer text is the server's to refuse, in its words; this bounds what crosses to the host.
const ChecklistInput = z.object({ content: z.string().max(checklistMax * 2) });

type ServerAction = z.input<typeof HeartbeatAction>;
type ServerPolicy = { tier: HeartbeatSettings["tier"]; schedule: HeartbeatSettings["schedule"] };
/** What a listed run and a run's own answer share. */
type RunFields = Pick<
  z.input<typeof HeartbeatRun>,
  | "tier"
  | "status"
  | "source"
  | "dryRun"
  | "startedAt"
  | "completedAt"
  | "delivered"
  | "suppressed"
  | "suppressReason"
  | "conversationId"
  | "toolCalls"
  | "actionsCreated"
  | "error"
  | "elapsedMs"
>;

export function runItem(runId: number, summary: string, run: RunFields): HeartbeatRunItem {
  return {
    runId,
    tier: run.tier,
    status: run.status,
    source: run.source,
    dryRun: run.dryRun,
    startedAt: run.startedAt,
    completedAt: run.completedAt,
    summary,
    delivered: run.delivered,
    suppressed: run.suppressed,
    suppressReason: run.suppressReason,
    conversationId: run.conversationId,
    toolCalls: run.toolCalls,
    actionsCreated: run.actionsCreated,
    error: run.error,
    elapsedMs: run.elapsedMs,
  };
}

/** An action's arguments or answer as text: a string as it is, anything else as laid-out JSON; cut when long. */
export function actionText(value: unknown): string {
  if (value === undefined || value === null) return "";
  const text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value));
  return text.length > ACTION_TEXT_MAX ? `${text.slice(0, ACTION_TEXT_MAX)}…` : text;
}

function actionItem(action: ServerAction): HeartbeatActionItem {
  return {
    actionId: action.id,
    type: action.type,
    mode: action.mode,
    status: action.status,
    payload: actionText(action.payload),
    result: actionText(action.result),
    createdAt: action.createdAt,
  };
}

function settingsOf(policy: ServerPolicy): HeartbeatSettings {
  const { enabled, everyMinutes, quietHours, timezone } = policy.schedule;
  return { tier: policy.tier, schedule: { enabled, everyMinutes, quietHours, timezone } };
}

function checklistOf(answer: { instructions: string; isDefault: boolean; updatedAt: string | null }): HeartbeatChecklist {
  return { content: answer.instructions, isDefault: answer.isDefault, updatedAt: answer.updatedAt };
}

/**
 * Runs a heartbeat request with {@link onServer}'s words, and says what a key without the
 * heartbeat's scopes lacks rather than "403" (sign-in asks only for the notes and todos scopes).
 */
async function heartbeatCall<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof TandemApiError && error.body.error === "insufficient_scope") {
      const named = typeof error.body.message === "string" ? error.body.message.match(/os\.[a-z]+:[a-z]+/g) : null;
      const scopes = named ? named.join(", ") : "the os.heartbeat scopes";
      throw new Error(`Your API key cannot do this (it lacks ${scopes}). Sign in with a key that has it.`, { cause: error });
    }
    return onServer(() => Promise.reject(error), AGENT_OFFLINE);
  }
}

/**
 * The Heartbeat section's server calls: the tier and schedule, the runs and their actions, a run
 * now (waited for, with a model's time), and the checklist. `onRun` is told after a run, so
 * the unread count and notifications follow at once rather than at the next poll.
 */
export function createHeartbeatMethods(
  session: SessionService,
  onRun: () => Promise<void>,
): Pick<
  AgentFacet,
  | "getHeartbeat"
  | "saveHeartbeatSettings"
  | "listHeartbeatRuns"
  | "getHeartbeatRun"
  | "runHeartbeat"
  | "getHeartbeatChecklist"
  | "saveHeartbeatChecklist"
> {
  const signedIn = (): TandemClient => {
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  const patient = (): TandemClient => {
    const credentials = session.credentials();
    if (!credentials) throw new Error("Sign in first");
    return serverClient(credentials.serverUrl, credentials.apiKey, false, RUN_TIMEOUT_MS);
  };
  return {
    async getHeartbeat() {
      const client = signedIn();
      const { status } = await heartbeatCall(() => client.call("heartbeatStatus"));
      return {
        settings: settingsOf({ tier: status.tier, schedule: status.schedule }),
        lastRun: status.lastRun ? runItem(status.lastRun.id, status.lastRun.summary, status.lastRun) : null,
        runsToday: status.runsToday,
        runsLast24h: status.runsLast24h,
        nextRunAt: status.nextRunAt,
        conversationId: status.conversationId,
      };
    },

    async saveHeartbeatSettings(input) {
      const body = parseInput("saveHeartbeatSettings", SettingsInput, input);
      const client = signedIn();
      const { policy } = await heartbeatCall(() => client.call("setHeartbeatPolicy", { body }));
      return settingsOf(policy);
    },

    async listHeartbeatRuns() {
      const client = signedIn();
      const { runs } = await heartbeatCall(() => client.call("listHeartbeatRuns", { query: { limit: RUN_PAGE } }));
      return runs.map((run) => runItem(run.id, run.summary, run));
    },

    async getHeartbeatRun(input) {
      const { runId } = parseInput("getHeartbeatRun", RunIdInput, input);
      const client = signedIn();
      const { run, actions } = await heartbeatCall(() => client.call("getHeartbeatRun", { params: { id: runId } }));
      return { ...runItem(run.id, run.summary, run), text: run.text, actions: actions.map(actionItem) };
    },

    async runHeartbeat(input): Promise<HeartbeatRunDetail> {
      const { dryRun } = parseInput("runHeartbeat", RunInput, input);
      const client = patient();
      try {
        const { result } = await heartbeatCall(() => client.call("runHeartbeat", { body: { dryRun } }));
        return { ...runItem(result.runId, summaryOf(result), result), text: result.text, actions: result.actions.map(actionItem) };
      } finally {
        await onRun();
      }
    },

    async getHeartbeatChecklist() {
      const client = signedIn();
      return checklistOf(await heartbeatCall(() => client.call("getHeartbeatInstructions")));
    },

    async saveHeartbeatChecklist(input) {
      const { content } = parseInput("saveHeartbeatChecklist", ChecklistInput, input);
      const client = signedIn();
      return checklistOf(await heartbeatCall(() => client.call("putHeartbeatInstructions", { body: { content } })));
    },
  };
}

/** The run's answer has no summary (the runs list has): its first words, or why it failed. */
function summaryOf(result: { text: string; error: string | null }): string {
  return result.error ?? result.text.replace(/\s+/g, " ").trim().slice(0, 200);
}
