import type { Scope } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Clock } from "../clock";
import type { Schema } from "../db/schema";
import type { RealtimeLog } from "./event-log";

/** One event of a user's log: the `data:` JSON of a frame of `GET /agent/stream`, an item of a poll. */
export interface UserEvent {
  /** Decimal integer string, increasing per user. */
  cursor: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/**
 * The user-level channel's name in the realtime log's notifications and stream registry. Endpoint
 * ids start `ep_`, so the two kinds of channel never meet; reusing the log's registry means a
 * shutdown ends these streams with the bridges'.
 */
export const userChannel = (userId: number) => `user:${userId}`;

/**
 * Events for people (not devices) appended inside one transaction, announced after it commits. The
 * cursor comes from the user's counter row, which the upsert locks until the transaction ends:
 * appenders to one user commit in cursor order, so a reader that has seen cursor n never later
 * finds a smaller one appear (the bridges' log works the same way). Append to several users in
 * increasing id order, so two transactions never wait on each other's counters crosswise.
 */
export class UserEventBatch {
  readonly #users = new Set<number>();

  constructor(
    private readonly log: RealtimeLog,
    private readonly clock: Clock,
  ) {}

  async append(tx: Kysely<Schema>, userId: number, type: string, data: Record<string, unknown>): Promise<string> {
    const row = await tx
      .insertInto("user_event_cursors")
      .values({ user_id: userId, cursor: 1 })
      .onConflict((oc) => oc.column("user_id").doUpdateSet((eb) => ({ cursor: eb("user_event_cursors.cursor", "+", 1) })))
      .returning("cursor")
      .executeTakeFirstOrThrow();
    await tx
      .insertInto("user_events")
      .values({ user_id: userId, cursor: row.cursor, type, data: JSON.stringify(data), created_at: this.clock.iso() })
      .execute();
    this.#users.add(userId);
    return String(row.cursor);
  }

  /** Tells open streams; call after the transaction has committed. */
  publish(): void {
    this.log.notify([...this.#users].map(userChannel));
    this.#users.clear();
  }
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
};

/**
 * Events of a user after `cursor` (exclusive), oldest first: only the kinds the reader's
 * credential (`scopes`) may see, left out in the query so a page is still full when there are more.
 */
export async function readUserEvents(
  db: Kysely<Schema>,
  userId: number,
  cursor: number,
  limit: number,
  scopes: ReadonlySet<Scope>,
): Promise<UserEvent[]> {
  const hidden = Object.entries(EVENT_SCOPES).flatMap(([type, scope]) => (scopes.has(scope) ? [] : [type]));
  let query = db
    .selectFrom("user_events")
    .select(["cursor", "type", "data", "created_at"])
    .where("user_id", "=", userId)
    .where("cursor", ">", cursor);
  if (hidden.length > 0) query = query.where("type", "not in", hidden);
  const rows = await query.orderBy("cursor").limit(limit).execute();
  return rows.map((row) => ({
    cursor: String(row.cursor),
    type: row.type,
    createdAt: row.created_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
  }));
}

/** The user's newest cursor (0 before any event). */
export async function latestUserCursor(db: Kysely<Schema>, userId: number): Promise<number> {
  const row = await db.selectFrom("user_event_cursors").select("cursor").where("user_id", "=", userId).executeTakeFirst();
  return Number(row?.cursor ?? 0);
}

/** How long events stay replayable; a client away longer starts again from the conversations. */
export const USER_EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Drops events past the retention (maintenance). */
export async function pruneUserEvents(db: Kysely<Schema>, clock: Clock): Promise<void> {
  const cutoff = new Date(clock.now().getTime() - USER_EVENT_RETENTION_MS).toISOString();
  await db.deleteFrom("user_events").where("created_at", "<", cutoff).execute();
}
