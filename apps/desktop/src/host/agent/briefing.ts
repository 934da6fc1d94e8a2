import type { TandemClient } from "@tandem/core";
import { z } from "zod";
import type { Briefing, BriefingSummaries } from "../../shared/desktop-api";
import type { AgentFacet } from "../facets";
import type { SessionService } from "../host-context";
import { onServer } from "../on-server";
import { parseInput } from "../parse-input";
import { serverClient } from "../session/server-client";
import { AGENT_OFFLINE } from "./agent-messages";

/** A briefing, its strategies and its matrix may be written by a model: allow it the agent's own run time. */
const BRIEFING_TIMEOUT_MS = 150_000;

const Summary = z.string().max(200_000).nullable();
const SummariesInput = z.object({
  statusQuoSummary: Summary,
  todoSummary: Summary,
  calendarSummary: Summary,
  notesSummary: Summary,
  emailAttentionSummary: Summary,
});
const CreateInput = z.object({ userTimezone: z.string().min(1).max(64) });

type ServerBriefing = BriefingSummaries & {
  generatedAt: string;
  timeDuration: string;
  suggestions: { suggestionId: string; title: string; description: string; action: string }[];
};

function briefingOf(briefingId: number, briefing: ServerBriefing): Briefing {
  return {
    briefingId,
    generatedAt: briefing.generatedAt,
    timeDuration: briefing.timeDuration,
    statusQuoSummary: briefing.statusQuoSummary,
    todoSummary: briefing.todoSummary,
    calendarSummary: briefing.calendarSummary,
    notesSummary: briefing.notesSummary,
    emailAttentionSummary: briefing.emailAttentionSummary,
    suggestions: briefing.suggestions.map(({ suggestionId, title, description, action }) => ({ suggestionId, title, description, action })),
  };
}

/** The Today view's server calls: the latest briefing, a new one, and its strategies and matrix. */
export function createBriefingMethods(
  session: SessionService,
): Pick<AgentFacet, "latestBriefing" | "createBriefing" | "briefingStrategies" | "briefingMatrix"> {
  /** The signed-in user's client, given the time a model needs to write. */
  const patient = (): TandemClient => {
    const credentials = session.credentials();
    if (!credentials) throw new Error("Sign in first");
    return serverClient(credentials.serverUrl, credentials.apiKey, false, BRIEFING_TIMEOUT_MS);
  };
  return {
    async latestBriefing() {
      const client = patient();
      const { briefings } = await onServer(() => client.call("listBriefings", { query: { limit: 1 } }), AGENT_OFFLINE);
      const latest = briefings[0];
      return latest ? briefingOf(latest.id, latest) : null;
    },

    async createBriefing(input) {
      const { userTimezone } = parseInput("createBriefing", CreateInput, input);
      const client = patient();
      const answer = await onServer(() => client.call("createBriefing", { body: { userTimezone } }), AGENT_OFFLINE);
      return briefingOf(answer.briefingId, answer);
    },

    async briefingStrategies(input) {
      const summaries = parseInput("briefingStrategies", SummariesInput, input);
      const client = patient();
      const { strategies } = await onServer(() => client.call("briefingStrategies", { body: summaries }), AGENT_OFFLINE);
      return strategies;
    },

    async briefingMatrix(input) {
      const summaries = parseInput("briefingMatrix", SummariesInput, input);
      const client = patient();
      const { matrix } = await onServer(() => client.call("briefingMatrix", { body: summaries }), AGENT_OFFLINE);
      return matrix;
    },
  };
}
