import type { Kysely } from "kysely";
import type { AppContext } from "../context";
import type { Schema } from "../db/schema";
import type { EventBatch } from "../realtime/event-log";

/**
 * One transaction and the realtime events it announces. Services that other areas call take an
 * optional unit, so a caller can make their change and ours commit together; the caller then
 * publishes the events after its commit.
 */
export interface WriteUnit {
  readonly tx: Kysely<Schema>;
  readonly events: EventBatch;
}

/** Runs `work` in `unit`, or in a transaction of its own whose events are published after commit. */
export async function inWriteUnit<T>(
  context: Pick<AppContext, "db" | "realtime">,
  unit: WriteUnit | undefined,
  work: (unit: WriteUnit) => Promise<T>,
): Promise<T> {
  if (unit) return work(unit);
  const events = context.realtime.batch();
  const result = await context.db.transaction().execute((tx) => work({ tx, events }));
  events.publish();
  return result;
}
