import type { HeartbeatTier } from "@tandem/core";
import type { ApiKeyCredential, OAuthCredential } from "../../auth/principal";
import type { AppContext } from "../../context";
import { inWriteUnit } from "../../delegation/grants/write-unit";
import { ApiError, conflict } from "../../http/errors";
import { admitRun } from "../usage/meters";
import { requireActionScopes, type ScheduledLimit, scheduledRunLimit, setterOf } from "./heartbeat-credential";
import { readPolicy, stopSchedule, updatePolicy } from "./heartbeat-policy";
import { currentThread, executeHeartbeat, refuseRun } from "./heartbeat-run";
import { startOfDay } from "./heartbeat-schedule";
import { type ClaimedRun, drainDueHeartbeats } from "./heartbeat-scheduler";
import { closeAbandonedRuns, countRunsSince, getRun, listRuns, pruneRuns, startRun } from "./heartbeat-store";

/** A run still `running` this long after its time limit has no server left to finish it. */
const ABANDONED_AFTER_LIMIT_MS = 60_000;
/** Runs are kept this long, then deleted with their actions. */
const RETENTION_MS = 30 * 24 * 60 * 60_000;
const PRUNE_EVERY_MS = 60 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

/**
 * The heartbeat of one server instance: manual runs, the scheduler (a maintenance task), the
 * status, and a clean stop. Runs of one user never overlap, across instances too: the database
 * holds the lock (see `startRun`).
 */
export class Heartbeats {
  readonly #app: AppContext;
  readonly #stopping = new AbortController();
  readonly #runs = new Set<Promise<void>>();
  #prunedAt = 0;

  constructor(app: AppContext) {
    this.#app = app;
  }

  /** Closes as failed the runs a stopped server left `running` (at start, and on every tick). */
  closeAbandonedRuns(): Promise<number> {
    const { clock, config, db } = this.#app;
    const cutoff = new Date(clock.nowMs() - config.agentTimeoutMs - ABANDONED_AFTER_LIMIT_MS).toISOString();
    return closeAbandonedRuns(db, cutoff, clock.iso());
  }

  /**
   * A run asked for through the API: 409 while the owner has another one going. Its tools are the
   * tier's, and never more than the asking key's scopes: a key that may not write todos cannot have
   * a heartbeat write them either. Naming the ACTIONS tier needs the write scopes (403).
   */
  async runNow(ownerId: number, key: ApiKeyCredential | OAuthCredential, body: { tier?: HeartbeatTier; dryRun: boolean }) {
    const apiKeyId = key.id;
    const { db, clock } = this.#app;
    if (this.#stopping.signal.aborted)
      throw new ApiError(503, "shutting_down", "The server is stopping; run the heartbeat again in a moment");
    if (body.tier === "ACTIONS") requireActionScopes(key.scopes);
    if (body.tier) await updatePolicy(db, ownerId, { tier: body.tier }, clock.now(), setterOf(key));
    const { tier } = await readPolicy(db, ownerId);
    // The run's row and its admission against the budgets in one transaction: a run over budget is
    // a 402 budget_exceeded and leaves no run behind (a scheduled one is recorded failed, saying why).
    const runId = await inWriteUnit(this.#app, undefined, async (unit) => {
      const claimed = await startRun(unit.tx, { ownerId, tier, source: "manual", dryRun: body.dryRun, startedAt: clock.iso() });
      if (claimed !== null) await admitRun(this.#app, unit, { userId: ownerId, apiKeyId }, "heartbeat");
      return claimed;
    });
    if (runId === null) throw conflict("heartbeat_running", "A heartbeat is already running for you; try again when it is over");
    await this.#track(
      executeHeartbeat(this.#app, {
        runId,
        ownerId,
        tier,
        dryRun: body.dryRun,
        apiKeyId,
        keyScopes: key.scopes,
        admitted: true,
        signal: this.#stopping.signal,
      }),
    );
    const { run, actions } = await getRun(db, ownerId, runId);
    return { runId: run.id, ...run, actions };
  }

  /** The maintenance task: close abandoned runs, prune old ones hourly, and run every due heartbeat. */
  async tick(): Promise<void> {
    const { db, clock, config, logger } = this.#app;
    await this.closeAbandonedRuns();
    if (clock.nowMs() - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = clock.nowMs();
      await pruneRuns(db, new Date(clock.nowMs() - RETENTION_MS).toISOString());
    }
    if (config.heartbeatConcurrency === 0 || this.#stopping.signal.aborted) return;
    const execute = ({ runId, ownerId, tier }: ClaimedRun) =>
      this.#track(this.#scheduled(runId, ownerId, tier)).catch((error) =>
        logger.error({ err: error, runId }, "scheduled heartbeat could not be recorded"),
      );
    await drainDueHeartbeats({
      db,
      now: () => clock.now(),
      concurrency: config.heartbeatConcurrency,
      signal: this.#stopping.signal,
      execute,
    });
  }

  async status(ownerId: number) {
    const { db, clock } = this.#app;
    const policy = await readPolicy(db, ownerId);
    const now = clock.now();
    const [lastRun, runsLast24h, runsToday, conversationId] = await Promise.all([
      listRuns(db, ownerId, 1),
      countRunsSince(db, ownerId, new Date(now.getTime() - DAY_MS).toISOString()),
      countRunsSince(db, ownerId, startOfDay(now, policy.schedule.timezone).toISOString()),
      currentThread(db, ownerId),
    ]);
    return {
      tier: policy.tier,
      lastRun: lastRun[0] ?? null,
      runsLast24h,
      runsToday,
      nextRunAt: policy.schedule.nextRunAt,
      schedule: policy.schedule,
      conversationId,
    };
  }

  /** Stops claiming, ends the runs going (each recorded as failed: the server stopped) and waits for them. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await Promise.allSettled(this.#runs);
  }

  /**
   * A claimed scheduled run, capped to the scopes of the credential that set the schedule; when
   * that credential was revoked the run is recorded as failed with the reason and the schedule
   * is switched off.
   */
  async #scheduled(runId: number, ownerId: number, tier: HeartbeatTier): Promise<void> {
    const { db, clock, logger } = this.#app;
    let limit: ScheduledLimit;
    try {
      limit = await scheduledRunLimit(db, ownerId, clock.nowMs());
    } catch (error) {
      // Never left `running`: recorded as failed, like any run the server failed during.
      logger.error({ err: error, runId }, "the scheduled heartbeat's credential could not be checked");
      return refuseRun(this.#app, runId, "The server failed during the run.");
    }
    if ("stop" in limit) {
      await stopSchedule(db, ownerId, limit.setById, clock.now());
      await refuseRun(this.#app, runId, limit.stop);
      return;
    }
    await executeHeartbeat(this.#app, {
      runId,
      ownerId,
      tier,
      dryRun: false,
      apiKeyId: null,
      keyScopes: limit.scopes,
      signal: this.#stopping.signal,
    });
  }

  #track(run: Promise<void>): Promise<void> {
    this.#runs.add(run);
    return run.finally(() => this.#runs.delete(run));
  }
}
