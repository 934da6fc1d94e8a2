import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
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

/**
 * PostgreSQL's answer when it had to abort a transaction to keep concurrent ones consistent:
 * `40001` serialization failure, `40P01` deadlock detected. Running the transaction again is the
 * documented remedy; SQLite never raises them (one writer at a time).
 */
export function isSerializationFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40001" || code === "40P01";
}

/**
 * Runs `work` in `unit`, or in a transaction of its own whose events are published after commit.
 * An own transaction that PostgreSQL aborted as a serialization failure runs once more (locks are
 * taken in one order, so this is rare); a second failure is raised.
 */
export async function inWriteUnit<T>(
  context: Pick<AppContext, "db" | "realtime">,
  unit: WriteUnit | undefined,
  work: (unit: WriteUnit) => Promise<T>,
): Promise<T> {
  if (unit) return work(unit);
  const attempt = async () => {
    const events = context.realtime.batch();
    const result = await context.db.transaction().execute((tx) => work({ tx, events }));
    events.publish();
    return result;
  };
  try {
    return await attempt();
  } catch (error) {
    if (!isSerializationFailure(error)) throw error;
    return attempt();
  }
}
