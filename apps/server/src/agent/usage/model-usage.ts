import type { ModelUsageReport, UsageTotals } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { meterModelCall, sourceOf } from "./meters";

/** What a model call was for; open-ended, these are the agent layer's own. */
export type ModelUsagePurpose = "chat" | "briefing" | "summary" | "heartbeat" | (string & {});

export interface ModelUsageInput {
  userId: number;
  /** The API key the call was made under; null for the server's own runs. */
  apiKeyId: string | null;
  /** A managed agent's id, when one made the call. */
  agentId?: string | null;
  deviceId?: string | null;
  purpose: ModelUsagePurpose;
  provider: string;
  model: string;
  /** As the SDK reports them (`usage.inputTokens`, `usage.outputTokens`): a count a provider leaves out is 0. */
  promptTokens: number | undefined;
  completionTokens: number | undefined;
  /** When the call was made (default: now). */
  at?: Date;
}

/**
 * Records one model call's tokens against the user (and key) it was made for, in its own
 * transaction; the meters (meters.ts) count it too. Runs record through their {@link RunMeter}.
 */
export async function recordModelUsage(db: Kysely<Schema>, input: ModelUsageInput): Promise<void> {
  await db.transaction().execute((tx) => meterModelCall(tx, input, { ...input, source: sourceOf(input.purpose), purpose: input.purpose }));
}

const emptyTotals = (): UsageTotals => ({ promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0 });

function addTo(totals: UsageTotals, row: UsageTotals): void {
  totals.promptTokens += row.promptTokens;
  totals.completionTokens += row.completionTokens;
  totals.totalTokens += row.totalTokens;
  totals.calls += row.calls;
}

/** Totals per group, the largest first. */
class Groups<K> {
  readonly #groups = new Map<string, K & UsageTotals>();

  add(key: K, row: UsageTotals): void {
    const id = JSON.stringify(key);
    let group = this.#groups.get(id);
    if (!group) {
      group = { ...key, ...emptyTotals() };
      this.#groups.set(id, group);
    }
    addTo(group, row);
  }

  list(): (K & UsageTotals)[] {
    return [...this.#groups.values()].sort((a, b) => b.totalTokens - a.totalTokens || b.calls - a.calls);
  }
}

/** One user's model calls since `since` (an ISO timestamp): in total, and by model, purpose and key. */
export async function readModelUsage(db: Kysely<Schema>, userId: number, since: string): Promise<ModelUsageReport> {
  // One grouped query; the few groups it returns are folded three ways here.
  const rows = await db
    .selectFrom("model_usage as u")
    // Only the user's own keys name a label, whatever a row says.
    .leftJoin("api_keys as k", (join) => join.onRef("k.id", "=", "u.api_key_id").onRef("k.user_id", "=", "u.user_id"))
    .where("u.user_id", "=", userId)
    .where("u.created_at", ">=", since)
    .groupBy(["u.provider", "u.model", "u.purpose", "u.api_key_id", "k.label"])
    .select(({ fn }) => [
      "u.provider",
      "u.model",
      "u.purpose",
      "u.api_key_id",
      "k.label",
      fn.sum<number>("u.prompt_tokens").as("prompt_tokens"),
      fn.sum<number>("u.completion_tokens").as("completion_tokens"),
      fn.sum<number>("u.total_tokens").as("total_tokens"),
      fn.countAll<number>().as("calls"),
    ])
    .execute();
  const total = emptyTotals();
  const byModel = new Groups<{ provider: string; model: string }>();
  const byPurpose = new Groups<{ purpose: string }>();
  const byKey = new Groups<{ apiKeyId: string | null; label: string | null }>();
  for (const row of rows) {
    const totals: UsageTotals = {
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      totalTokens: Number(row.total_tokens),
      calls: Number(row.calls),
    };
    addTo(total, totals);
    byModel.add({ provider: row.provider, model: row.model }, totals);
    byPurpose.add({ purpose: row.purpose }, totals);
    byKey.add({ apiKeyId: row.api_key_id, label: row.label }, totals);
  }
  return { total, byModel: byModel.list(), byPurpose: byPurpose.list(), byKey: byKey.list() };
}
