import type { HeartbeatTier } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { inQuietHours, nextRunAfter, outsideQuietHours, type QuietHours } from "./heartbeat-schedule";
import { startRun } from "./heartbeat-store";

/**
 * Scheduled heartbeats. The schedule lives in the database (`heartbeat_policies.next_run_at`), so
 * it survives restarts; a run is claimed by moving `next_run_at` forward with a compare-and-set in
 * the same transaction that records the run as `running`. Of several server instances on one
 * database exactly one wins each claim, a restart finds a due run still due (it was never claimed)
 * or already moved on (it was), and a crash between the two cannot happen: they commit together.
 */

/** Due schedules read at a time. */
const BATCH = 100;

interface DueSchedule {
  readonly user_id: number;
  readonly next_run_at: string | null;
  readonly tier: HeartbeatTier;
  readonly every_minutes: number;
  readonly quiet_start: string | null;
  readonly quiet_end: string | null;
  readonly timezone: string;
}

export interface ClaimedRun {
  readonly runId: number;
  readonly ownerId: number;
  readonly tier: HeartbeatTier;
}

class AlreadyRunning extends Error {}

async function dueSchedules(db: Kysely<Schema>, now: string, limit: number): Promise<DueSchedule[]> {
  return db
    .selectFrom("heartbeat_policies")
    .select(["user_id", "next_run_at", "tier", "every_minutes", "quiet_start", "quiet_end", "timezone"])
    .where("schedule_enabled", "=", 1)
    .where("next_run_at", "<=", now)
    .orderBy("next_run_at")
    .limit(limit)
    .execute();
}

/**
 * Claims one due schedule: null when another instance claimed it first, when the owner has a run
 * going (the schedule stays due and is tried again on a later tick), or when it falls in quiet
 * hours (then it moves to their end without a run).
 */
async function claim(db: Kysely<Schema>, due: DueSchedule, now: Date): Promise<ClaimedRun | null> {
  const seen = due.next_run_at as string;
  const quiet: QuietHours | null = due.quiet_start && due.quiet_end ? { start: due.quiet_start, end: due.quiet_end } : null;
  /** Moves the next run to `next` if no one moved it since it was read; true when this did. */
  const moveNext = async (executor: Kysely<Schema>, next: Date) => {
    const moved = await executor
      .updateTable("heartbeat_policies")
      .set({ next_run_at: next.toISOString() })
      .where("user_id", "=", due.user_id)
      .where("next_run_at", "=", seen)
      .where("schedule_enabled", "=", 1)
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  };
  if (inQuietHours(now, quiet, due.timezone)) {
    // Missed while the server was down, and now it is quiet time: the run waits for the end of it.
    await moveNext(db, outsideQuietHours(now, quiet, due.timezone));
    return null;
  }
  const next = nextRunAfter(new Date(seen), now, { everyMinutes: due.every_minutes, quietHours: quiet, timezone: due.timezone });
  try {
    return await db.transaction().execute(async (trx) => {
      if (!(await moveNext(trx, next))) return null;
      const runId = await startRun(trx, {
        ownerId: due.user_id,
        tier: due.tier,
        source: "schedule",
        dryRun: false,
        startedAt: now.toISOString(),
      });
      // Rolls the claim back: the schedule stays due until the owner's other run is over.
      if (runId === null) throw new AlreadyRunning();
      return { runId, ownerId: due.user_id, tier: due.tier };
    });
  } catch (error) {
    if (error instanceof AlreadyRunning) return null;
    throw error;
  }
}

export interface DrainOptions {
  readonly db: Kysely<Schema>;
  readonly now: () => Date;
  /** Runs at once on this instance. */
  readonly concurrency: number;
  readonly signal: AbortSignal;
  /** Executes a claimed run to its end (recording it however it ends). */
  readonly execute: (run: ClaimedRun) => Promise<void>;
}

/** Runs every due heartbeat, `concurrency` at a time, until none is due (or the server stops). */
export async function drainDueHeartbeats(options: DrainOptions): Promise<number> {
  const { db, signal, concurrency } = options;
  const running = new Set<Promise<void>>();
  // Owners this drain could not claim (someone else has them): not read again until the next tick.
  const passed = new Set<number>();
  let started = 0;
  try {
    while (!signal.aborted) {
      const batch = (await dueSchedules(db, options.now().toISOString(), BATCH + passed.size)).filter((due) => !passed.has(due.user_id));
      if (batch.length === 0) break;
      for (const due of batch) {
        if (signal.aborted) break;
        while (running.size >= concurrency) await Promise.race(running);
        const claimed = await claim(db, due, options.now());
        if (!claimed) {
          passed.add(due.user_id);
          continue;
        }
        started++;
        const run: Promise<void> = options.execute(claimed).finally(() => running.delete(run));
        running.add(run);
      }
    }
  } finally {
    await Promise.allSettled(running);
  }
  return started;
}
