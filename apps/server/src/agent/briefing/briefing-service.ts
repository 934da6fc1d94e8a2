import { randomUUID } from "node:crypto";
import type { BriefingRequest, BriefingSummariesInput } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import type { Logger } from "pino";
import type { UserPrincipal } from "../../auth/principal";
import type { BriefingsTable, Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { gatherFacts } from "./briefing-facts";
import type { BriefingSections, BriefingWriter, WriterUsage } from "./briefing-writer";
import { deterministicWriter } from "./deterministic-writer";
import { sanitiseHtml } from "./html-text";
import { oneLine } from "./normalise";
import { composeMatrix, composeStrategies } from "./priorities";
import { parseTimeWindow } from "./time-window";

/** One model call's tokens, as the agent layer records them per user and per key. */
export interface BriefingUsage extends WriterUsage {
  userId: number;
  apiKeyId: string;
  purpose: "briefing";
}

export interface BriefingServiceOptions {
  db: Kysely<Schema>;
  /** Writes the sections; the deterministic writer when absent (the `local` provider). */
  writer?: BriefingWriter;
  /** Told the tokens of every briefing written, under the calling key. */
  onUsage?: (usage: BriefingUsage) => Promise<void>;
  /** Where a failing writer is reported; the briefing then falls back to the deterministic writer. */
  logger?: Logger;
  now?: () => Date;
}

/** Suggestions kept from a writer, and the length of each of their fields. */
const MAX_SUGGESTIONS = 5;
const SUGGESTION_CHARS = 400;

const SECTION_NAMES = ["statusQuoSummary", "todoSummary", "calendarSummary", "notesSummary", "emailAttentionSummary"] as const;

/** A count a writer reported, as a whole number; anything but a positive number counts none. */
const tokenCount = (value: number) => (Number.isFinite(value) && value > 0 ? Math.round(value) : 0);

function fromRow(row: Selectable<BriefingsTable>) {
  return {
    statusQuoSummary: row.status_quo_summary,
    todoSummary: row.todo_summary,
    calendarSummary: row.calendar_summary,
    notesSummary: row.notes_summary,
    emailAttentionSummary: row.email_attention_summary,
    suggestions: JSON.parse(row.suggestions) as { suggestionId: string; title: string; description: string; action: string }[],
    tokenUsage: { total: row.token_usage },
    timeDuration: row.time_duration,
    generatedAt: row.generated_at,
  };
}

export type BriefingService = ReturnType<typeof createBriefingService>;

export function createBriefingService({
  db,
  writer = deterministicWriter,
  onUsage,
  logger,
  now = () => new Date(),
}: BriefingServiceOptions) {
  /**
   * The writer's sections, or the deterministic ones when it fails: a provider that is down costs
   * the prose, not the briefing. A client that left gets neither: its model call stops and nothing is kept.
   */
  async function write(facts: Parameters<BriefingWriter["write"]>[0], signal?: AbortSignal) {
    if (writer === deterministicWriter) return writer.write(facts);
    try {
      return await writer.write(facts, signal);
    } catch (error) {
      if (signal?.aborted) throw new ApiError(499, "client_closed_request", "The request was cancelled");
      logger?.warn({ err: error }, "briefing writer failed; writing the briefing without the model");
      return deterministicWriter.write(facts);
    }
  }

  /** Whatever a writer returned, made safe: the HTML sanitised, suggestions as plain one-line text with ids. */
  function finish(sections: BriefingSections) {
    const html = Object.fromEntries(SECTION_NAMES.map((name) => [name, sanitiseHtml(String(sections[name] ?? ""))])) as Record<
      (typeof SECTION_NAMES)[number],
      string
    >;
    const suggestions = (Array.isArray(sections.suggestions) ? sections.suggestions : [])
      .map((s) => ({
        suggestionId: randomUUID(),
        title: oneLine(s.title, SUGGESTION_CHARS),
        description: oneLine(s.description, SUGGESTION_CHARS),
        action: oneLine(s.action, SUGGESTION_CHARS),
      }))
      .filter((s) => s.title)
      .slice(0, MAX_SUGGESTIONS);
    return { ...html, suggestions };
  }

  return {
    /** Writes a briefing of the caller's workspace, keeps it in their history and reports its tokens. */
    async create(principal: UserPrincipal, request: BriefingRequest, signal?: AbortSignal) {
      const at = now();
      const window = parseTimeWindow(request.timeDuration, request.userTimezone, at);
      const facts = await gatherFacts(db, principal.userId, request, window, at);
      const { sections, usage } = await write(facts, signal);
      const briefing = finish(sections);
      const promptTokens = tokenCount(usage.promptTokens);
      const completionTokens = tokenCount(usage.completionTokens);
      const total = Math.max(1, promptTokens + completionTokens);
      const generatedAt = at.toISOString();
      // Counted before it is stored: the tokens were spent even if storing fails.
      await onUsage?.({
        ...usage,
        promptTokens,
        completionTokens,
        userId: principal.userId,
        apiKeyId: principal.credential.id,
        purpose: "briefing",
      });
      const { id } = await db
        .insertInto("briefings")
        .values({
          owner_id: principal.userId,
          api_key_id: principal.credential.id,
          time_duration: window.label,
          status_quo_summary: briefing.statusQuoSummary,
          todo_summary: briefing.todoSummary,
          calendar_summary: briefing.calendarSummary,
          notes_summary: briefing.notesSummary,
          email_attention_summary: briefing.emailAttentionSummary,
          suggestions: JSON.stringify(briefing.suggestions),
          token_usage: total,
          generated_at: generatedAt,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      return { briefingId: Number(id), ...briefing, tokenUsage: { total }, timeDuration: window.label, generatedAt };
    },

    /** The owner's briefings, newest first. */
    async history(ownerId: number, limit: number) {
      const rows = await db
        .selectFrom("briefings")
        .selectAll()
        .where("owner_id", "=", ownerId)
        .orderBy("generated_at", "desc")
        .orderBy("id", "desc")
        .limit(limit)
        .execute();
      return rows.map((row) => ({ id: Number(row.id), ...fromRow(row) }));
    },

    strategies: (summaries: BriefingSummariesInput) => ({ strategies: composeStrategies(summaries), generatedAt: now().toISOString() }),

    matrix: (summaries: BriefingSummariesInput) => ({ matrix: composeMatrix(summaries), generatedAt: now().toISOString() }),
  };
}
