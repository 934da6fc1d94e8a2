import { z } from "zod";
import { isTimeZone } from "../dates";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** The largest summary `/briefing/strategies` and `/briefing/matrix` read, each, in bytes of UTF-8. */
export const MAX_BRIEFING_SUMMARY_BYTES = 100 * 1024;
/** Five summaries at their limit, doubled for JSON escaping, and room for the rest. */
const SUMMARIES_BODY_LIMIT = 2 * 5 * MAX_BRIEFING_SUMMARY_BYTES + 64 * 1024;
/** Emails and calendar events one briefing reads, each. */
export const MAX_BRIEFING_ITEMS = 200;
const MAX_ITEM_TEXT = 20_000;

/** The closed set of a strategy's `urgencyLevel`; anything else is normalised onto it. */
export const URGENCY_LEVELS = ["critical", "high", "medium", "low"] as const;
export type UrgencyLevel = (typeof URGENCY_LEVELS)[number];
/** The closed set of a strategy's `category`. */
export const STRATEGY_CATEGORIES = ["tasks", "meetings", "communication", "notes", "planning", "wellbeing"] as const;
export type StrategyCategory = (typeof STRATEGY_CATEGORIES)[number];
/** The closed set of a matrix item's `source`: the summary it came from. */
export const MATRIX_SOURCES = ["todo", "calendar", "email", "note", "status"] as const;
export type MatrixSource = (typeof MATRIX_SOURCES)[number];

const SummaryField = z
  .string()
  .refine((s) => Buffer.byteLength(s) <= MAX_BRIEFING_SUMMARY_BYTES, { error: "must be at most 100 KB" })
  .nullish()
  .describe("HTML, as /briefing answered it (or any HTML); null or omitted when absent");

/** The five summaries of a briefing, as clients pass them on to strategies and the matrix. */
const BriefingSummaries = z
  .object({
    statusQuoSummary: SummaryField,
    todoSummary: SummaryField,
    calendarSummary: SummaryField,
    notesSummary: SummaryField,
    emailAttentionSummary: SummaryField,
  })
  .prefault({});

const Text = (max: number) => z.string().max(max).nullish();

const Email = z.object({
  id: z.union([z.string().max(500), z.number()]).nullish(),
  summary: Text(MAX_ITEM_TEXT),
  priority: z
    .union([z.string().max(100), z.number()])
    .nullish()
    .describe("high, urgent or 1 count as high priority; low or 4 and above as low"),
  category: Text(200),
  needsReply: z.boolean().nullish(),
  date: Text(100).describe("when it arrived, ISO 8601"),
  sender: Text(500),
  snippet: Text(MAX_ITEM_TEXT),
});

const EventTime = z
  .string()
  .max(100)
  .refine((s) => !Number.isNaN(Date.parse(s)), { error: "must be an ISO 8601 date or date-time" })
  .describe("ISO 8601 date-time, or YYYY-MM-DD for an all-day event");

const CalendarEvent = z.object({
  summary: Text(2000),
  start: EventTime,
  end: EventTime,
  location: Text(2000),
  description: Text(MAX_ITEM_TEXT),
});

const BriefingRequest = z
  .object({
    timeDuration: z
      .string()
      .max(100)
      .default("last 24 hours")
      .describe("the window for changed notes: 'last N hours|days|weeks|months', 'today', 'yesterday', 'this week', 'this month'"),
    userTimezone: z
      .string()
      .refine(isTimeZone, { error: "must be an IANA time zone such as Europe/Paris" })
      .default("UTC")
      .describe("where 'today' is, for todos, the window and calendar times"),
    emails: z.array(Email).max(MAX_BRIEFING_ITEMS).nullish(),
    calendarEvents: z.array(CalendarEvent).max(MAX_BRIEFING_ITEMS).nullish(),
  })
  .prefault({});
export type BriefingRequest = z.output<typeof BriefingRequest>;

const Suggestion = z.object({
  suggestionId: z.string().describe("UUID"),
  title: z.string(),
  description: z.string(),
  action: z.string(),
});

const BriefingSections = {
  statusQuoSummary: z.string().describe("HTML"),
  todoSummary: z.string().describe("HTML"),
  calendarSummary: z.string().describe("HTML"),
  notesSummary: z.string().describe("HTML"),
  emailAttentionSummary: z.string().describe("HTML"),
  suggestions: z.array(Suggestion),
  tokenUsage: z.object({ total: z.number().int() }),
  timeDuration: z.string(),
  generatedAt: Timestamp,
};

export const StrategyItem = z.object({
  priority: z.number().int().min(1).max(3),
  title: z.string(),
  description: z.string(),
  action: z.string().describe("a one-line next step"),
  urgencyLevel: z.enum(URGENCY_LEVELS),
  category: z.enum(STRATEGY_CATEGORIES),
});
export type StrategyItem = z.infer<typeof StrategyItem>;

export const MatrixItem = z.object({ title: z.string(), source: z.enum(MATRIX_SOURCES) });
export type MatrixItem = z.infer<typeof MatrixItem>;

export const Matrix = z.object({
  q1_urgent_important: z.array(MatrixItem),
  q2_not_urgent_important: z.array(MatrixItem),
  q3_urgent_not_important: z.array(MatrixItem),
  q4_not_urgent_not_important: z.array(MatrixItem),
});
export type Matrix = z.infer<typeof Matrix>;

export const briefingRoutes = {
  createBriefing: defineRoute({
    method: "POST",
    path: "/briefing",
    category: "agent",
    summary:
      "Write a briefing from the caller's todos (due today and overdue) and recently changed notes, and the emails and calendar events given; kept in history",
    auth: "user",
    scope: "os.notes:read",
    alsoRequires: ["os.todos:read"],
    body: BriefingRequest,
    response: success({ briefingId: z.number().int(), ...BriefingSections }),
  }),
  listBriefings: defineRoute({
    method: "GET",
    path: "/briefings",
    category: "agent",
    summary: "The caller's briefings, newest first",
    auth: "user",
    scope: "os.notes:read",
    alsoRequires: ["os.todos:read"],
    query: z.object({ limit: z.coerce.number().int().min(1).max(50).default(10) }),
    response: success({ briefings: z.array(z.object({ id: z.number().int(), ...BriefingSections })) }),
  }),
  briefingStrategies: defineRoute({
    method: "POST",
    path: "/briefing/strategies",
    category: "agent",
    summary: "The top three things to do next, from a briefing's summaries (empty when none is given)",
    auth: "user",
    bodyLimit: SUMMARIES_BODY_LIMIT,
    body: BriefingSummaries,
    response: success({ strategies: z.array(StrategyItem).max(3), generatedAt: Timestamp }),
  }),
  briefingMatrix: defineRoute({
    method: "POST",
    path: "/briefing/matrix",
    category: "agent",
    summary: "A briefing's items in the four quadrants of urgent and important (all empty when no summary is given)",
    auth: "user",
    bodyLimit: SUMMARIES_BODY_LIMIT,
    body: BriefingSummaries,
    response: success({ matrix: Matrix, generatedAt: Timestamp }),
  }),
} as const;

export type BriefingSummariesInput = z.output<typeof BriefingSummaries>;
