// The delivery log's retention: finished deliveries (succeeded, or failed for good) leave it after
// `TANDEM_WEBHOOK_RETENTION_DAYS`, with their attempts.

import type { AppContext } from "../context";

/** Deliveries one statement deletes; the sweep repeats until fewer are left. */
const PRUNE_BATCH = 500;
const DAY_MS = 24 * 60 * 60 * 1000;
/** An instance prunes at most this often: the age has no index of its own, and a day's retention needs no more. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

const lastPruned = new WeakMap<object, number>();

/**
 * The maintenance task: {@link pruneWebhookDeliveries} at most once an hour per instance (only a
 * pace: whichever instance prunes, and however many at once, the outcome is the same).
 */
export function webhookPruneTask(app: Pick<AppContext, "db" | "clock" | "config">): () => Promise<unknown> {
  return async () => {
    const now = app.clock.nowMs();
    const last = lastPruned.get(app);
    if (last !== undefined && now - last < PRUNE_EVERY_MS) return 0;
    lastPruned.set(app, now);
    return pruneWebhookDeliveries(app);
  };
}

/**
 * Deletes finished deliveries last changed before the retention, in batches. The status and age are
 * in the DELETE's own WHERE, so a delivery replayed meanwhile (back to `pending`, `updated_at` now)
 * is kept; two instances pruning at once delete each row once (PostgreSQL re-checks the WHERE
 * after the row lock; SQLite writers take turns). Answers how many were deleted.
 */
export async function pruneWebhookDeliveries(app: Pick<AppContext, "db" | "clock" | "config">): Promise<number> {
  const { db, clock, config } = app;
  const cutoff = new Date(clock.nowMs() - config.webhookRetentionDays * DAY_MS).toISOString();
  let total = 0;
  for (;;) {
    const deleted = await db.transaction().execute(async (tx) => {
      const gone = await tx
        .deleteFrom("webhook_deliveries")
        .where("id", "in", (eb) =>
          eb
            .selectFrom("webhook_deliveries")
            .select("id")
            .where("status", "in", ["succeeded", "failed"])
            .where("updated_at", "<", cutoff)
            .limit(PRUNE_BATCH),
        )
        .where("status", "in", ["succeeded", "failed"])
        .where("updated_at", "<", cutoff)
        .returning("id")
        .execute();
      // The foreign key cascades where it is enforced; this keeps the log clean where it is not.
      if (gone.length > 0) {
        await tx
          .deleteFrom("webhook_attempts")
          .where(
            "delivery_id",
            "in",
            gone.map((row) => row.id),
          )
          .execute();
      }
      return gone.length;
    });
    total += deleted;
    if (deleted < PRUNE_BATCH) return total;
  }
}
