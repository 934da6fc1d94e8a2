import { EventEmitter } from "node:events";
import type { Kysely, SelectQueryBuilder } from "kysely";
import type { Clock } from "../../clock";
import type { Schema } from "../../db/schema";
import type { StreamWakeups } from "./stream-wakeups";

/**
 * The kinds a device's stream carries: those runtime-wire.md lists for bridges. A bridge drops a
 * kind it does not know without moving its cursor, so anything else would come back at every
 * reconnect (each ~55 s); events for the person go to their user stream
 * ({@link EventBatch.appendToUserStream}) instead.
 */
export const BRIDGE_EVENT_TYPES = [
  "message.dispatch",
  "grant.request",
  "grant.activated",
  "grant.declined",
  "grant.revoked",
  "grant.expired",
  "collaboration.completed",
  "collaboration.revoked",
  "collaboration.expired",
  "tool.approval_decision",
] as const;

export type BridgeEventType = (typeof BRIDGE_EVENT_TYPES)[number];

/** An event as bridges read it: the `data:` JSON of an SSE frame and an item of a poll answer. */
export interface RealtimeEvent {
  /** Decimal integer string, increasing per endpoint. */
  cursor: string;
  type: string;
  endpointId: string;
  createdAt: string;
  data: Record<string, unknown>;
}

type Executor = Kysely<Schema>;
// biome-ignore lint/complexity/noBannedTypes: a query that has selected nothing yet
type LogQuery = SelectQueryBuilder<Schema, "realtime_events", {}>;

/**
 * What one durable log is kept for: a device (its endpoint id; read by `/local-realtime/*`) or a
 * person (read by `/agent/stream` and `/agent/events`). Both logs work alike: a counter row that
 * the append locks hands out the next cursor, the event is written in the caller's transaction,
 * and readers read strictly after a cursor.
 */
export type StreamKey = { readonly endpointId: string } | { readonly userId: number };

/**
 * The key's name in notifications, wake-ups and the registry of open streams. Endpoint ids start
 * `ep_`, so a person's `user:<id>` never meets one.
 */
export function streamKeyName(key: StreamKey): string {
  return "endpointId" in key ? key.endpointId : `user:${key.userId}`;
}

/** One stored event, before it is shaped for its wire. */
export interface LogEvent {
  cursor: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

/** Called when a key's log has grown, with the new cursor when known. */
export type LogListener = (cursor?: number) => void;

/** Why the server ends an open stream before its lifetime is up. */
export type StreamEndReason = "endpoint_revoked" | "shutdown" | "superseded";

/**
 * Open streams one endpoint may hold on one server instance. A bridge holds one; a few more cover
 * reconnects that race a half-closed connection the server has not noticed yet. Beyond this, a new
 * stream ends the endpoint's oldest one (`superseded`), so a bridge that reconnects always gets
 * its stream, while one token can never pin more than this many connections' memory.
 */
export const MAX_STREAMS_PER_ENDPOINT = 4;

/** Ends one open stream; the stream unregisters itself. */
export type StreamCloser = (reason: StreamEndReason) => void;

/**
 * The durable event logs (one per {@link StreamKey}), and the fan-out that tells open streams they
 * grew. An event is written (and committed) before anyone is told about it, so a stream never
 * shows an event that a reconnect could miss: the database is the truth, a notification only says
 * "read again".
 *
 * Notifications reach this instance's streams at once; with Redis configured, a wake-up (key and
 * cursor, never the payload) also reaches every other instance's ({@link StreamWakeups}).
 *
 * Appends usually share a transaction with the state change they announce, so they are collected
 * in an {@link EventBatch} and published once the transaction has committed:
 *
 * ```ts
 * const events = realtime.batch();
 * await db.transaction().execute(async (tx) => {
 *   … change state …
 *   await events.append(tx, endpointId, "grant.activated", {...});
 * });
 * events.publish();
 * ```
 */
export class RealtimeLog {
  /** Emits a key's name (with the new cursor) whenever that log has grown. */
  readonly #appended = new EventEmitter().setMaxListeners(0);
  /** Open streams of this instance, by key name, so a revocation or shutdown can end them. */
  readonly #streams = new Map<string, Set<StreamCloser>>();
  #shuttingDown = false;

  constructor(
    private readonly clock: Clock,
    /** Set when Redis is configured: wake-ups to and from the other instances. */
    readonly wakeups?: StreamWakeups,
  ) {
    // Another instance appended: wake this instance's followers of that key (they read the DB).
    wakeups?.onWake((name, cursor) => this.#appended.emit(name, cursor));
    // Wake-ups may have been lost while Redis was away: every follower here reads once more.
    wakeups?.onResync(() => {
      for (const name of this.#appended.eventNames()) this.#appended.emit(name);
    });
  }

  batch(): EventBatch {
    return new EventBatch(this, this.clock);
  }

  /** Appends one event outside any other transaction and publishes it. */
  async appendNow(db: Executor, endpointId: string, type: BridgeEventType, data: Record<string, unknown>): Promise<string> {
    const events = this.batch();
    const cursor = await db.transaction().execute((tx) => events.append(tx, endpointId, type, data));
    events.publish();
    return cursor;
  }

  /** Calls `listener` whenever the key's log grows; returns the unsubscribe function. */
  subscribe(key: StreamKey, listener: LogListener): () => void {
    const name = streamKeyName(key);
    this.#appended.on(name, listener);
    return () => this.#appended.off(name, listener);
  }

  /** Tells this instance's followers, and through Redis every other instance's, that logs grew. */
  notify(grown: ReadonlyMap<string, number>): void {
    if (grown.size === 0) return;
    for (const [name, cursor] of grown) this.#appended.emit(name, cursor);
    this.wakeups?.publish(grown);
  }

  /**
   * Registers an open stream; returns the function that unregisters it. During shutdown the
   * stream is ended at once instead, so none outlives the server. Past
   * {@link MAX_STREAMS_PER_ENDPOINT}, the key's oldest streams end (`superseded`).
   */
  registerStream(key: StreamKey, close: StreamCloser): () => void {
    if (this.#shuttingDown) {
      close("shutdown");
      return () => {};
    }
    const name = streamKeyName(key);
    let open = this.#streams.get(name);
    if (!open) {
      open = new Set();
      this.#streams.set(name, open);
    }
    open.add(close);
    // A Set keeps insertion order: the first is the oldest. Ending it unregisters it.
    for (const oldest of [...open].slice(0, Math.max(0, open.size - MAX_STREAMS_PER_ENDPOINT))) oldest("superseded");
    return () => {
      const current = this.#streams.get(name);
      current?.delete(close);
      if (current?.size === 0) this.#streams.delete(name);
    };
  }

  /**
   * Ends the endpoint's open streams on this instance (its token was revoked or rotated); the
   * bridge's reconnect then meets the credential check. Answers how many were ended.
   */
  endStreams(endpointId: string): number {
    const open = [...(this.#streams.get(endpointId) ?? [])];
    for (const close of open) close("endpoint_revoked");
    return open.length;
  }

  /** Ends every open stream and refuses new ones: the server is shutting down. */
  endAllStreams(): void {
    this.#shuttingDown = true;
    for (const open of [...this.#streams.values()]) for (const close of [...open]) close("shutdown");
  }

  /** Streams open on this instance (all endpoints, or one). */
  openStreamCount(endpointId?: string): number {
    if (endpointId !== undefined) return this.#streams.get(endpointId)?.size ?? 0;
    let count = 0;
    for (const open of this.#streams.values()) count += open.size;
    return count;
  }

  /** A device's events after `cursor` (exclusive), oldest first, as bridges read them. */
  async read(db: Executor, endpointId: string, cursor: number, limit: number): Promise<RealtimeEvent[]> {
    const events = await readLog(db, { endpointId }, cursor, limit);
    return events.map(({ cursor, type, createdAt, data }) => ({ cursor, type, endpointId, createdAt, data }));
  }
}

/**
 * Events of one log after `cursor` (exclusive), oldest first, at most `limit`; kinds in `hidden`
 * are left out in the query, so a page is still full when there are more.
 */
export async function readLog(
  db: Executor,
  key: StreamKey,
  cursor: number,
  limit: number,
  hidden: readonly string[] = [],
): Promise<LogEvent[]> {
  // The two tables have the same event columns; only the key column differs.
  const base: LogQuery =
    "endpointId" in key
      ? db.selectFrom("realtime_events").where("endpoint_id", "=", key.endpointId)
      : (db.selectFrom("user_events").where("user_id", "=", key.userId) as unknown as LogQuery);
  let query = base.select(["cursor", "type", "data", "created_at"]).where("cursor", ">", cursor);
  if (hidden.length > 0) query = query.where("type", "not in", hidden);
  const rows = await query.orderBy("cursor").limit(limit).execute();
  return rows.map((row) => ({
    cursor: String(row.cursor),
    type: row.type,
    createdAt: row.created_at,
    data: JSON.parse(row.data) as Record<string, unknown>,
  }));
}

/**
 * The log's newest cursor (0 before any event), or `null` when nobody may read it any more: a
 * device's endpoint that is gone or revoked. One primary-key read.
 */
export async function latestCursor(db: Executor, key: StreamKey): Promise<number | null> {
  if ("endpointId" in key) {
    const row = await db
      .selectFrom("runtime_endpoints")
      .select(["event_cursor", "revoked_at"])
      .where("id", "=", key.endpointId)
      .executeTakeFirst();
    return !row || row.revoked_at !== null ? null : Number(row.event_cursor);
  }
  const row = await db.selectFrom("user_event_cursors").select("cursor").where("user_id", "=", key.userId).executeTakeFirst();
  return Number(row?.cursor ?? 0);
}

/**
 * The next cursor of a log. It comes from the key's counter row (the endpoint's, or the person's
 * cursor row), which this statement locks until the transaction ends: appenders to one log commit
 * in cursor order, so a reader that has seen cursor n can never later find a smaller one appear.
 */
async function nextCursor(tx: Executor, key: StreamKey): Promise<number> {
  if ("endpointId" in key) {
    const row = await tx
      .updateTable("runtime_endpoints")
      .set((eb) => ({ event_cursor: eb("event_cursor", "+", 1) }))
      .where("id", "=", key.endpointId)
      .returning("event_cursor")
      .executeTakeFirst();
    if (!row) throw new Error(`no runtime endpoint ${key.endpointId}`);
    return Number(row.event_cursor);
  }
  const row = await tx
    .insertInto("user_event_cursors")
    .values({ user_id: key.userId, cursor: 1 })
    .onConflict((oc) => oc.column("user_id").doUpdateSet((eb) => ({ cursor: eb("user_event_cursors.cursor", "+", 1) })))
    .returning("cursor")
    .executeTakeFirstOrThrow();
  return Number(row.cursor);
}

/**
 * Events appended inside one transaction (to devices' logs and to people's), announced after it
 * commits. Append to several people in increasing id order, so two transactions never wait on
 * each other's counters crosswise.
 */
export class EventBatch {
  /** Key name → the newest cursor appended to it here. */
  readonly #grown = new Map<string, number>();
  readonly #afterPublish = new Set<() => void>();

  constructor(
    private readonly log: RealtimeLog,
    private readonly clock: Clock,
  ) {}

  /** Appends to one log inside `tx`; answers the event's cursor. */
  async appendTo(tx: Executor, key: StreamKey, type: string, data: Record<string, unknown>): Promise<string> {
    const cursor = await nextCursor(tx, key);
    const row = { cursor, type, data: JSON.stringify(data), created_at: this.clock.iso() };
    if ("endpointId" in key)
      await tx
        .insertInto("realtime_events")
        .values({ endpoint_id: key.endpointId, ...row })
        .execute();
    else
      await tx
        .insertInto("user_events")
        .values({ user_id: key.userId, ...row })
        .execute();
    this.#grown.set(streamKeyName(key), cursor);
    return String(cursor);
  }

  /** Appends to a device's log (a kind bridges know). */
  append(tx: Executor, endpointId: string, type: BridgeEventType, data: Record<string, unknown>): Promise<string> {
    return this.appendTo(tx, { endpointId }, type, data);
  }

  /** Appends to every live endpoint of a user (a bridge kind about the person, not one device). */
  async appendToUser(tx: Executor, userId: number, type: BridgeEventType, data: Record<string, unknown>): Promise<void> {
    const endpoints = await tx
      .selectFrom("runtime_endpoints")
      .select("id")
      .where("owner_id", "=", userId)
      .where("revoked_at", "is", null)
      .orderBy("id")
      .execute();
    for (const { id } of endpoints) await this.append(tx, id, type, data);
  }

  /**
   * Appends to the user's own stream (`GET /agent/stream`): what the owner's apps act on but
   * bridges do not know, such as a message or a request waiting for the owner's answer.
   */
  async appendToUserStream(tx: Executor, userId: number, type: string, data: Record<string, unknown>): Promise<string> {
    return this.appendTo(tx, { userId }, type, data);
  }

  /** Runs `action` once at the next {@link publish}, after the commit (e.g. wake the webhook worker). */
  afterPublish(action: () => void): void {
    this.#afterPublish.add(action);
  }

  /** Tells open streams (on every instance); call after the transaction has committed. */
  publish(): void {
    this.log.notify(new Map(this.#grown));
    this.#grown.clear();
    const actions = [...this.#afterPublish];
    this.#afterPublish.clear();
    for (const action of actions) action();
  }
}
