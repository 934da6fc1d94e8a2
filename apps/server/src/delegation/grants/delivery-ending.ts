import type { Kysely } from "kysely";
import type { AuditActor } from "../../audit/audit-log";
import type { Clock } from "../../clock";
import type { Schema } from "../../db/schema";
import { releaseCredit } from "./credits";
import { OPEN_DELIVERY_STATUSES } from "./message-rows";

/**
 * Ends every delivery of a grant that has not reached a terminal state, when the grant is
 * revoked or expires: nothing more of it may be injected. Credits of task invites no runtime
 * acknowledged go back to their senders. Returns the ids of the messages ended.
 */
export async function endOpenDeliveries(
  tx: Kysely<Schema>,
  clock: Clock,
  grantId: string,
  status: "revoked" | "expired",
  actor: AuditActor,
): Promise<string[]> {
  const ended = await tx
    .updateTable("messages")
    .set({ status, terminal_at: clock.iso() })
    .where("grant_id", "=", grantId)
    .where("status", "in", OPEN_DELIVERY_STATUSES)
    .returning(["id", "sender_id", "credit_reserved"])
    .execute();
  for (const message of ended) {
    if (message.credit_reserved === 1) await releaseCredit(tx, clock, message, actor);
  }
  return ended.map((message) => message.id);
}
