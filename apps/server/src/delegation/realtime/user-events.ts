import type { Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Clock } from "../../clock";
import type { Schema } from "../../db/schema";
import { readLog } from "./event-log";

/** One event of a user's log: the `data:` JSON of a frame of `GET /agent/stream`, an item of a poll. */
export interface UserEvent {
  /** Decimal integer string, increasing per user. */
  cursor: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/**
 * What a credential must hold to be told of a kind: the read scope of the list the event announces
 * (a key without `os.team:read` cannot list collaborations or tool approvals, so the stream does
 * not tell it of them either). Kinds not named need none (messages).
 */
const EVENT_SCOPES: Readonly<Record<string, Scope>> = {
  "collaboration.request": "os.team:read",
  "collaboration.accepted": "os.team:read",
  "tool.approval_requested": "os.team:read",
  "escalation.requested": "os.tools:read",
  "escalation.resolved": "os.tools:read",
};

/** The kinds a credential holding `scopes` is not told of. */
export function hiddenKinds(scopes: ReadonlySet<Scope>): string[] {
  return Object.entries(EVENT_SCOPES).flatMap(([type, scope]) => (scopes.has(scope) ? [] : [type]));
}

/**
 * Events of a user after `cursor` (exclusive), oldest first: only the kinds the reader's
 * credential (`scopes`) may see, left out in the query so a page is still full when there are more.
 */
export function readUserEvents(
  db: Kysely<Schema>,
  userId: number,
  cursor: number,
  limit: number,
  scopes: ReadonlySet<Scope>,
): Promise<UserEvent[]> {
  return readLog(db, { userId }, cursor, limit, hiddenKinds(scopes));
}

/** How long events stay replayable; a client away longer starts again from the conversations. */
export const USER_EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Drops events past the retention (maintenance). */
export async function pruneUserEvents(db: Kysely<Schema>, clock: Clock): Promise<void> {
  const cutoff = new Date(clock.now().getTime() - USER_EVENT_RETENTION_MS).toISOString();
  await db.deleteFrom("user_events").where("created_at", "<", cutoff).execute();
}
