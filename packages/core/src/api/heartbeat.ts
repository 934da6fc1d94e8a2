import { z } from "zod";
import { isTimeZone } from "../dates";
import { IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** `MESSAGES`: read-only checks and one message. `ACTIONS`: may also create todos and notes and write memory. */
export const HEARTBEAT_TIERS = ["MESSAGES", "ACTIONS"] as const;
export type HeartbeatTier = (typeof HEARTBEAT_TIERS)[number];

/** The longest heartbeat checklist (the note `Memory/Self/HEARTBEAT.md`), in characters. */
export const MAX_HEARTBEAT_INSTRUCTIONS_CHARS = 10_000;
/** The shortest and longest interval of a heartbeat schedule, in minutes (a week). */
export const MIN_HEARTBEAT_EVERY_MINUTES = 5;
export const MAX_HEARTBEAT_EVERY_MINUTES = 7 * 24 * 60;

const Tier = z.enum(HEARTBEAT_TIERS, { error: "must be MESSAGES or ACTIONS" });
const ClockTime = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: "must be a time of day as HH:MM (24-hour clock)" })
  .describe("HH:MM in the schedule's time zone");
const TimeZone = z.string().max(64).refine(isTimeZone, { error: "must be an IANA time zone such as Europe/Paris" });

const QuietHours = z
  .object({ start: ClockTime, end: ClockTime })
  .describe("no scheduled heartbeat runs from start to end (it may span midnight, e.g. 22:00 to 07:00); start = end means none");

/** What a policy update may say about the schedule; fields left out keep their stored value. */
const ScheduleInput = z.object({
  enabled: z.boolean().optional(),
  everyMinutes: z
    .number()
    .int({ error: "must be a whole number of minutes" })
    .min(MIN_HEARTBEAT_EVERY_MINUTES, { error: `must be at least ${MIN_HEARTBEAT_EVERY_MINUTES} minutes` })
    .max(MAX_HEARTBEAT_EVERY_MINUTES, { error: `must be at most ${MAX_HEARTBEAT_EVERY_MINUTES} minutes (a week)` })
    .optional()
    .describe("the interval between scheduled runs (60: hourly)"),
  quietHours: QuietHours.nullable().optional().describe("null: no quiet hours"),
  timezone: TimeZone.optional().describe("where the quiet hours and 'today' are; also the runs' time zone"),
});

export const HeartbeatSchedule = z.object({
  enabled: z.boolean(),
  everyMinutes: z.number().int(),
  quietHours: z.object({ start: z.string(), end: z.string() }).nullable(),
  timezone: z.string(),
  nextRunAt: Timestamp.nullable().describe("when the next scheduled run is due; null while the schedule is off"),
});

/** The most tools one tool policy may name. */
export const MAX_TOOL_POLICY_ENTRIES = 100;

/**
 * The owner's per-tool decisions for runs: `allow` (the default for a tool not named), `ask`
 * (the run pauses for the owner: an escalation), `deny` (the tool is removed from the run).
 */
export const ToolPolicyMap = z
  .record(z.string().min(1).max(200), z.enum(["allow", "ask", "deny"], { error: "must be allow, ask or deny" }))
  .refine((policy) => Object.keys(policy).length <= MAX_TOOL_POLICY_ENTRIES, { error: `name at most ${MAX_TOOL_POLICY_ENTRIES} tools` });
export type ToolPolicyMap = z.infer<typeof ToolPolicyMap>;

export const HeartbeatPolicy = z.object({
  tier: z.enum(HEARTBEAT_TIERS),
  schedule: HeartbeatSchedule,
  toolPolicy: ToolPolicyMap.optional().describe("per-tool decisions for heartbeat runs (ask: pause for the owner); absent: none"),
});

const RunStatus = z.enum(["running", "requires_action", "completed", "failed"]).describe("requires_action: paused on an escalation");

export const HeartbeatRun = z.object({
  id: z.number().int(),
  tier: z.enum(HEARTBEAT_TIERS),
  policy: z.enum(HEARTBEAT_TIERS).describe("the same value as tier"),
  status: RunStatus,
  source: z.enum(["manual", "schedule"]),
  dryRun: z.boolean(),
  startedAt: Timestamp,
  completedAt: Timestamp.nullable(),
  endedAt: Timestamp.nullable().describe("the same value as completedAt"),
  summary: z.string().describe("the message's first words, or why the run failed"),
  text: z.string().describe("the message the run wrote (delivered or not)"),
  suppressed: z.boolean(),
  suppressReason: z.string().nullable(),
  delivered: z.boolean(),
  conversationId: z.number().int().nullable().describe("the heartbeat thread the message went to"),
  messageId: z.number().int().nullable(),
  toolCalls: z.number().int(),
  actionsCreated: z.number().int().describe("actions recorded for the run"),
  model: z.string().nullable(),
  elapsedMs: z.number().int().nullable(),
  error: z.string().nullable().describe("why the run failed"),
});

export const HeartbeatAction = z.object({
  id: z.number().int(),
  runId: z.number().int(),
  type: z.string().describe("the tool's name, or send_message for the message itself"),
  mode: z.enum(["message", "action"]).describe("message: reading and the message (any tier); action: a write (ACTIONS only)"),
  status: z.enum(["executed", "skipped", "failed"]),
  payload: z.unknown().describe("the tool's arguments, or the message"),
  result: z.unknown().describe("what the tool answered, or why the action was skipped or failed"),
  createdAt: Timestamp,
});

const RunParams = z.object({ id: IdParam });

const InstructionsAnswer = success({
  instructions: z.string().describe("Markdown"),
  isDefault: z.boolean().describe("true while the checklist is the default one"),
  updatedAt: Timestamp.nullable().describe("null until the note exists"),
  noteId: z.number().int().nullable(),
  path: z.string().describe("Memory/Self/HEARTBEAT.md"),
});

export const heartbeatRoutes = {
  getHeartbeatPolicy: defineRoute({
    method: "GET",
    path: "/heartbeat/policy",
    category: "agent",
    summary: "The caller's heartbeat tier and schedule",
    auth: "user",
    scope: "os.heartbeat:read",
    response: success({ policy: HeartbeatPolicy }),
  }),
  setHeartbeatPolicy: defineRoute({
    method: "POST",
    path: "/heartbeat/policy",
    category: "agent",
    summary: "Set the heartbeat tier and/or schedule (schedule fields left out keep their value)",
    auth: "user",
    scope: "os.heartbeat:run",
    body: z
      .object({
        tier: Tier.optional(),
        schedule: ScheduleInput.optional(),
        toolPolicy: ToolPolicyMap.nullable().optional().describe("replaces the per-tool decisions; null clears them"),
      })
      .refine((body) => body.tier !== undefined || body.schedule !== undefined || body.toolPolicy !== undefined, {
        error: "give tier, schedule or toolPolicy",
      }),
    response: success({ policy: HeartbeatPolicy }),
  }),
  runHeartbeat: defineRoute({
    method: "POST",
    path: "/heartbeat/run",
    category: "agent",
    summary: "Run a heartbeat now (tier updates the stored policy first; dryRun writes and delivers nothing)",
    auth: "user",
    scope: "os.heartbeat:run",
    body: z
      .object({
        tier: Tier.optional(),
        dryRun: z.boolean().default(false).describe("run the pass, but execute no write and deliver nothing: say what it would do"),
      })
      .prefault({}),
    response: success({
      result: z.object({
        runId: z.number().int(),
        startedAt: Timestamp,
        completedAt: Timestamp.nullable(),
        status: RunStatus,
        actionsCreated: z.number().int(),
        tier: z.enum(HEARTBEAT_TIERS),
        text: z.string(),
        suppressed: z.boolean(),
        suppressReason: z.string().nullable(),
        delivered: z.boolean(),
        toolCalls: z.number().int(),
        model: z.string().nullable(),
        elapsedMs: z.number().int().nullable(),
        dryRun: z.boolean(),
        source: z.enum(["manual", "schedule"]),
        error: z.string().nullable(),
        conversationId: z.number().int().nullable(),
        messageId: z.number().int().nullable(),
        actions: z.array(HeartbeatAction),
      }),
    }),
  }),
  listHeartbeatRuns: defineRoute({
    method: "GET",
    path: "/heartbeat/runs",
    category: "agent",
    summary: "The caller's heartbeat runs, newest first",
    auth: "user",
    scope: "os.heartbeat:read",
    query: z.object({ limit: z.coerce.number().int().min(1).max(50).default(20) }),
    response: success({ runs: z.array(HeartbeatRun) }),
  }),
  getHeartbeatRun: defineRoute({
    method: "GET",
    path: "/heartbeat/runs/:id",
    category: "agent",
    summary: "One of the caller's heartbeat runs with its actions",
    auth: "user",
    scope: "os.heartbeat:read",
    params: RunParams,
    response: success({ run: HeartbeatRun, actions: z.array(HeartbeatAction) }),
  }),
  heartbeatStatus: defineRoute({
    method: "GET",
    path: "/heartbeat/status",
    category: "agent",
    summary: "The heartbeat tier, the last run, how many ran in the last 24 hours and today, and when the next is due",
    auth: "user",
    scope: "os.heartbeat:read",
    response: success({
      status: z.object({
        tier: z.enum(HEARTBEAT_TIERS),
        lastRun: HeartbeatRun.nullable(),
        runsLast24h: z.number().int(),
        runsToday: z.number().int().describe("since midnight in the schedule's time zone"),
        nextRunAt: Timestamp.nullable(),
        schedule: HeartbeatSchedule,
        conversationId: z.number().int().nullable().describe("the heartbeat thread, once a message was delivered"),
      }),
    }),
  }),
  getHeartbeatInstructions: defineRoute({
    method: "GET",
    path: "/heartbeat/instructions",
    category: "agent",
    summary: "The heartbeat checklist (the note Memory/Self/HEARTBEAT.md), or the default one",
    auth: "user",
    scope: "os.heartbeat:read",
    response: InstructionsAnswer,
  }),
  putHeartbeatInstructions: defineRoute({
    method: "PUT",
    path: "/heartbeat/instructions",
    category: "agent",
    summary: "Replace the heartbeat checklist (Markdown, at most 10,000 characters)",
    auth: "user",
    scope: "os.heartbeat:run",
    body: z.object({
      content: z
        .string({ error: "content is required" })
        .max(MAX_HEARTBEAT_INSTRUCTIONS_CHARS, {
          error: `must be at most ${MAX_HEARTBEAT_INSTRUCTIONS_CHARS.toLocaleString("en-US")} characters`,
        })
        .refine((text) => text.trim().length > 0, { error: "must not be empty" }),
    }),
    response: InstructionsAnswer,
  }),
} as const;
