import { EventEmitter } from "node:events";
import type { Kysely } from "kysely";
import type { Clock } from "../clock";
import type { Schema } from "../db/schema";
import { UserEventBatch } from "./user-events";

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
 * The durable per-endpoint event log. An event is written (and committed) before anyone is told
 * about it, so a stream never shows an event that a reconnect could miss.
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
  /** Emits the endpoint id whenever that endpoint's log has grown. */
  readonly #appended = new EventEmitter().setMaxListeners(0);
  /** Open streams of this instance, by endpoint, so a revocation or shutdown can end them. */
  readonly #streams = new Map<string, Set<StreamCloser>>();
  #shuttingDown = false;

  constructor(private readonly clock: Clock) {}

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

  /** Calls `listener` whenever the endpoint's log grows; returns the unsubscribe function. */
  subscribe(endpointId: string, listener: () => void): () => void {
    this.#appended.on(endpointId, listener);
    return () => this.#appended.off(endpointId, listener);
  }

  notify(endpointIds: Iterable<string>): void {
    for (const endpointId of new Set(endpointIds)) this.#appended.emit(endpointId);
  }

  /**
   * Registers an open stream; returns the function that unregisters it. During shutdown the
   * stream is ended at once instead, so none outlives the server. Past
   * {@link MAX_STREAMS_PER_ENDPOINT}, the endpoint's oldest streams end (`superseded`).
   */
  registerStream(endpointId: string, close: StreamCloser): () => void {
    if (this.#shuttingDown) {
      close("shutdown");
      return () => {};
    }
    let open = this.#streams.get(endpointId);
    if (!open) {
      open = new Set();
      this.#streams.set(endpointId, open);
    }
    open.add(close);
    // A Set keeps insertion order: the first is the oldest. Ending it unregisters it.
    for (const oldest of [...open].slice(0, Math.max(0, open.size - MAX_STREAMS_PER_ENDPOINT))) oldest("superseded");
    return () => {
      const current = this.#streams.get(endpointId);
      current?.delete(close);
      if (current?.size === 0) this.#streams.delete(endpointId);
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

  /** Events after `cursor` (exclusive), oldest first. */
  async read(db: Executor, endpointId: string, cursor: number, limit: number): Promise<RealtimeEvent[]> {
    const rows = await db
      .selectFrom("realtime_events")
      .select(["cursor", "type", "data", "created_at"])
      .where("endpoint_id", "=", endpointId)
      .where("cursor", ">", cursor)
      .orderBy("cursor")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      cursor: String(row.cursor),
      type: row.type,
      endpointId,
      createdAt: row.created_at,
      data: JSON.parse(row.data) as Record<string, unknown>,
    }));
  }
}

/** Events appended inside one transaction (to devices' logs and to people's), announced after it commits. */
export class EventBatch {
  readonly #endpoints = new Set<string>();
  readonly #users: UserEventBatch;

  constructor(
    private readonly log: RealtimeLog,
    private readonly clock: Clock,
  ) {
    this.#users = new UserEventBatch(log, clock);
  }

  /**
   * Appends inside `tx`. The cursor comes from the endpoint's row, which this update locks until
   * the transaction ends: appenders to one endpoint commit in cursor order, so a reader that has
   * seen cursor n can never later find a smaller one appear.
   */
  async append(tx: Executor, endpointId: string, type: BridgeEventType, data: Record<string, unknown>): Promise<string> {
    const row = await tx
      .updateTable("runtime_endpoints")
      .set((eb) => ({ event_cursor: eb("event_cursor", "+", 1) }))
      .where("id", "=", endpointId)
      .returning("event_cursor")
      .executeTakeFirst();
    if (!row) throw new Error(`no runtime endpoint ${endpointId}`);
    await tx
      .insertInto("realtime_events")
      .values({ endpoint_id: endpointId, cursor: row.event_cursor, type, data: JSON.stringify(data), created_at: this.clock.iso() })
      .execute();
    this.#endpoints.add(endpointId);
    return String(row.event_cursor);
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
   * bridges do not know, such as a request waiting for the owner's answer.
   */
  async appendToUserStream(tx: Executor, userId: number, type: string, data: Record<string, unknown>): Promise<void> {
    await this.#users.append(tx, userId, type, data);
  }

  /** Tells open streams; call after the transaction has committed. */
  publish(): void {
    this.log.notify(this.#endpoints);
    this.#endpoints.clear();
    this.#users.publish();
  }
}
