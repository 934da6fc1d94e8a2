// Calls through `POST /tools`, counted for `GET /tools`: one small row per call, read back as
// counts per tool over a window, and pruned once older than the window.

import { TOOL_USAGE_WINDOW_DAYS } from "@tandem/core";
import { type Kysely, sql } from "kysely";
import type { Schema } from "../../db/schema";

const WINDOW_MS = TOOL_USAGE_WINDOW_DAYS * 86_400_000;

export interface ToolUsage {
  windowDays: number;
  since: string;
  totalCalls: number;
  byTool: { tool: string; calls: number; failures: number; lastCalledAt: string }[];
}

/**
 * Inserts written behind the answer, per database and owner: a call's answer does not wait for its
 * row (a round trip of the database on every call, for a count), and reading the usage waits for
 * this instance's inserts of that owner first, so a caller always sees its own calls counted.
 */
const pendingRecords = new WeakMap<Kysely<Schema>, Map<number, Set<Promise<void>>>>();

export interface ToolCallRecord {
  ownerId: number;
  tool: string;
  ok: boolean;
  elapsedMs: number;
  at: Date;
}

/** Records a call without waiting for the row; a failed insert goes to `onError` (the log), never to the caller. */
export function recordToolCall(db: Kysely<Schema>, call: ToolCallRecord, onError: (error: unknown) => void): void {
  const byOwner = pendingRecords.get(db) ?? new Map<number, Set<Promise<void>>>();
  pendingRecords.set(db, byOwner);
  const pending = byOwner.get(call.ownerId) ?? new Set<Promise<void>>();
  byOwner.set(call.ownerId, pending);
  const insert = insertToolCall(db, call)
    .catch(onError)
    .finally(() => {
      pending.delete(insert);
      if (pending.size === 0 && byOwner.get(call.ownerId) === pending) byOwner.delete(call.ownerId);
    });
  pending.add(insert);
}

async function insertToolCall(db: Kysely<Schema>, call: ToolCallRecord): Promise<void> {
  await db
    .insertInto("tool_calls")
    .values({
      owner_id: call.ownerId,
      tool: call.tool,
      ok: call.ok ? 1 : 0,
      elapsed_ms: Math.round(call.elapsedMs),
      created_at: call.at.toISOString(),
    })
    .execute();
}

/** Waits for this instance's unwritten records of the owner (each settles: failures are logged). */
async function recordsWritten(db: Kysely<Schema>, ownerId: number): Promise<void> {
  const pending = pendingRecords.get(db)?.get(ownerId);
  if (pending) await Promise.all(pending);
}

/** The owner's calls in the window, per tool, most used first. */
export async function toolUsage(db: Kysely<Schema>, ownerId: number, now: Date): Promise<ToolUsage> {
  await recordsWritten(db, ownerId);
  const since = new Date(now.getTime() - WINDOW_MS).toISOString();
  const rows = await db
    .selectFrom("tool_calls")
    .select((eb) => [
      "tool",
      eb.fn.countAll<number | string>().as("calls"),
      sql<number | string>`sum(case when ok = 0 then 1 else 0 end)`.as("failures"),
      eb.fn.max("created_at").as("last_called_at"),
    ])
    .where("owner_id", "=", ownerId)
    .where("created_at", ">=", since)
    .groupBy("tool")
    .execute();
  // PostgreSQL answers counts as strings.
  const byTool = rows
    .map((row) => ({ tool: row.tool, calls: Number(row.calls), failures: Number(row.failures), lastCalledAt: row.last_called_at }))
    .sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool));
  return { windowDays: TOOL_USAGE_WINDOW_DAYS, since, totalCalls: byTool.reduce((sum, t) => sum + t.calls, 0), byTool };
}

/** Drops calls older than the window: nothing reads them. */
export async function pruneToolCalls(db: Kysely<Schema>, now: Date): Promise<void> {
  await db
    .deleteFrom("tool_calls")
    .where("created_at", "<", new Date(now.getTime() - WINDOW_MS).toISOString())
    .execute();
}
