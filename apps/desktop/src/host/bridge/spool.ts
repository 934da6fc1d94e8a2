import type { Kysely } from "kysely";
import type { LocalSchema } from "../store/local-schema";
import { DispatchEnvelope } from "./dispatch-envelope";

/**
 * received  → the dispatch is stored (device ack follows);
 * validated → the server said the injection is valid;
 * running   → the runtime has it;
 * done | rejected (invalid injection, never run) | failed (the runtime failed or was interrupted).
 */
export type SpoolState = "received" | "validated" | "running" | "done" | "rejected" | "failed";

/** States a restart picks up again; `running` is not among them: see {@link BridgeSpool.interrupted}. */
const WAITING: readonly SpoolState[] = ["received", "validated"];
const ACTIVE: readonly SpoolState[] = ["received", "validated", "running"];

export interface SpoolEntry {
  readonly messageId: string;
  readonly deliveryId: string;
  readonly communicationSessionId: string;
  readonly envelope: DispatchEnvelope;
  readonly state: SpoolState;
  readonly reason: string | null;
  readonly receivedAt: string;
  readonly updatedAt: string;
}

/** The bridge's durable inbox (the `bridge_spool` table of the local store). */
export class BridgeSpool {
  constructor(private readonly db: Kysely<LocalSchema>) {}

  /** Stores a dispatched message once; answers false when it was already there (a replayed event). */
  async receive(envelope: DispatchEnvelope, deliveryId: string): Promise<boolean> {
    const now = new Date().toISOString();
    const result = await this.db
      .insertInto("bridge_spool")
      .values({
        message_id: envelope.id,
        delivery_id: deliveryId,
        communication_session_id: envelope.communicationSessionId,
        envelope: JSON.stringify(envelope),
        state: "received",
        reason: null,
        received_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column("message_id").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async get(messageId: string): Promise<SpoolEntry | null> {
    const row = await this.db.selectFrom("bridge_spool").selectAll().where("message_id", "=", messageId).executeTakeFirst();
    return row ? toEntry(row) : null;
  }

  async setState(messageId: string, state: SpoolState, reason: string | null = null): Promise<void> {
    await this.db
      .updateTable("bridge_spool")
      .set({ state, reason, updated_at: new Date().toISOString() })
      .where("message_id", "=", messageId)
      .execute();
  }

  /** The oldest entry still waiting for the runtime. */
  async nextWaiting(): Promise<SpoolEntry | null> {
    const row = await this.db
      .selectFrom("bridge_spool")
      .selectAll()
      .where("state", "in", WAITING)
      .orderBy("received_at")
      .orderBy("message_id")
      .executeTakeFirst();
    return row ? toEntry(row) : null;
  }

  /** Entries that were running when the host stopped. */
  async interrupted(): Promise<SpoolEntry[]> {
    const rows = await this.db.selectFrom("bridge_spool").selectAll().where("state", "=", "running").execute();
    return rows.map(toEntry);
  }

  async activeCount(): Promise<number> {
    const row = await this.db
      .selectFrom("bridge_spool")
      .select((eb) => eb.fn.countAll<number>().as("count"))
      .where("state", "in", ACTIVE)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** The latest entries, newest first (the owner's activity log). */
  async recent(limit: number): Promise<SpoolEntry[]> {
    const rows = await this.db
      .selectFrom("bridge_spool")
      .selectAll()
      .orderBy("received_at", "desc")
      .orderBy("message_id", "desc")
      .limit(limit)
      .execute();
    return rows.map(toEntry);
  }

  async all(): Promise<SpoolEntry[]> {
    const rows = await this.db.selectFrom("bridge_spool").selectAll().orderBy("received_at").orderBy("message_id").execute();
    return rows.map(toEntry);
  }
}

function toEntry(row: LocalSchema["bridge_spool"]): SpoolEntry {
  return {
    messageId: row.message_id,
    deliveryId: row.delivery_id,
    communicationSessionId: row.communication_session_id,
    envelope: DispatchEnvelope.parse(JSON.parse(row.envelope)),
    state: row.state as SpoolState,
    reason: row.reason,
    receivedAt: row.received_at,
    updatedAt: row.updated_at,
  };
}
