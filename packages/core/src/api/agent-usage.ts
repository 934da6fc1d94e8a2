import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

const Count = z.number().int().min(0);

/** Tokens and calls over a period, for one group of the caller's model calls or all of them. */
export const UsageTotals = z.object({
  promptTokens: Count,
  completionTokens: Count,
  totalTokens: Count,
  calls: Count.describe("model calls (an agent run with tool steps makes several)"),
});
export type UsageTotals = z.infer<typeof UsageTotals>;

export const ModelUsageReport = z.object({
  total: UsageTotals,
  byModel: z.array(UsageTotals.extend({ provider: z.string(), model: z.string() })),
  byPurpose: z.array(UsageTotals.extend({ purpose: z.string().describe("chat, briefing, summary, heartbeat…") })),
  byKey: z.array(
    UsageTotals.extend({
      apiKeyId: z.string().nullable().describe("the API key the calls were made under; null for the server's own runs (heartbeats)"),
      label: z.string().nullable(),
    }),
  ),
});
export type ModelUsageReport = z.infer<typeof ModelUsageReport>;

const ModelAlias = z.enum(["default", "fast", "smart", "local"]);

export const agentUsageRoutes = {
  getAgentUsage: defineRoute({
    method: "GET",
    path: "/agent/usage",
    category: "agent",
    summary: "Tokens your agent's model calls took since a time (default: the last 30 days), in total and by model, purpose and key",
    auth: "user",
    query: z.object({
      since: z
        .union([z.iso.datetime({ offset: true }), z.iso.date()], {
          error: "must be an ISO 8601 date or date-time, such as 2026-01-31 or 2026-01-31T08:00:00Z",
        })
        .optional()
        .describe("only calls at or after this time; a date means its start in UTC"),
    }),
    response: success({ since: Timestamp.describe("the start of the period counted"), usage: ModelUsageReport }),
  }),
  listAgentModels: defineRoute({
    method: "GET",
    path: "/agent/models",
    category: "agent",
    summary: "The models chat may name (the `model` field): each alias with the provider and model id it runs on",
    auth: "user",
    response: success({
      provider: z.enum(["local", "openai-compatible", "anthropic"]).describe("the configured provider"),
      models: z.array(z.object({ alias: ModelAlias, provider: z.string(), modelId: z.string() })),
      defaultAlias: z.literal("default"),
    }),
  }),
} as const;
