import type { Kysely } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { DevicePrincipal } from "../../auth/principal";
import type { Clock } from "../../clock";
import type { Schema } from "../../db/schema";
import type { RealtimeEvent } from "./event-log";

export const DISPATCH_EVENT = "message.dispatch";

/** The delivery ids announced by `message.dispatch` events (`data.deliveryId`), without repeats. */
export function dispatchedDeliveryIds(events: readonly RealtimeEvent[]): string[] {
  const ids = new Set<string>();
  for (const event of events) {
    const deliveryId = event.type === DISPATCH_EVENT ? event.data.deliveryId : undefined;
    if (typeof deliveryId === "string" && deliveryId !== "") ids.add(deliveryId);
  }
  return [...ids];
}

/**
 * "Queued becomes dispatched when the event is written to a stream or returned by poll": moves
 * the deliveries these events announce from `queued` to `dispatched`, in one statement, with an
 * audit entry for each delivery that moved. Only the endpoint's own deliveries move, and only
 * from `queued`, so a replay (or a delivery already acked, revoked or expired) changes nothing.
 * Answers the delivery ids that moved.
 */
export async function markDispatched(
  db: Kysely<Schema>,
  clock: Clock,
  reader: DevicePrincipal,
  events: readonly RealtimeEvent[],
): Promise<string[]> {
  const deliveryIds = dispatchedDeliveryIds(events);
  if (deliveryIds.length === 0) return [];
  return db.transaction().execute(async (tx) => {
    const now = clock.iso();
    const moved = await tx
      .updateTable("messages")
      .set({ status: "dispatched", dispatched_at: now })
      .where("delivery_id", "in", deliveryIds)
      .where("target_endpoint_id", "=", reader.credential.id)
      .where("status", "=", "queued")
      .returning(["id", "delivery_id", "sender_id", "recipient_id"])
      .execute();
    for (const row of moved) {
      await recordAudit(tx, clock, {
        actor: reader,
        action: "delivery.dispatch",
        objectType: "delivery",
        objectId: row.delivery_id,
        parties: [row.sender_id, row.recipient_id],
        detail: { messageId: row.id, endpointId: reader.credential.id },
      });
    }
    return moved.map((row) => row.delivery_id);
  });
}
