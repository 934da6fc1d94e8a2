import { recordAudit } from "../../audit/audit-log";
import type { AppContext } from "../../context";
import { inWriteUnit } from "../grants";
import { notifyRequestingBridge } from "./collaboration-events";
import { type CollaborationRecord, findCollaboration, selectCollaborations } from "./collaboration-records";

/** Statuses that run out: a request nobody answered, and an allowed one the requester never collected. */
const EXPIRING = ["requested", "accepted"] as const;

export function isDue(record: Pick<CollaborationRecord, "status" | "expires_at">, nowIso: string): boolean {
  return (EXPIRING as readonly string[]).includes(record.status) && record.expires_at <= nowIso;
}

/**
 * Records a collaboration's expiry (conditional, so a concurrent answer or sweep wins once) and
 * tells the bridge that asked. Answers whether this call expired it.
 */
async function expireCollaboration(context: AppContext, record: CollaborationRecord): Promise<boolean> {
  return inWriteUnit(context, undefined, async ({ tx, events }) => {
    const now = context.clock.iso();
    const result = await tx
      .updateTable("collaborations")
      .set({ status: "expired" })
      .where("id", "=", record.id)
      .where("status", "in", EXPIRING)
      .where("expires_at", "<=", now)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    await notifyRequestingBridge(tx, events, record, "collaboration.expired", { previousStatus: record.status, expiredAt: now });
    await recordAudit(tx, context.clock, {
      actor: "system",
      action: "collaboration.expire",
      objectType: "collaboration",
      objectId: record.id,
      parties: [record.requester_id, record.target_id],
      detail: { previousStatus: record.status },
    });
    return true;
  });
}

/** The lazy half: a collaboration read after its time has passed is recorded as expired first. */
export async function settleCollaboration(context: AppContext, record: CollaborationRecord): Promise<CollaborationRecord> {
  if (!isDue(record, context.clock.iso())) return record;
  await expireCollaboration(context, record);
  return (await findCollaboration(context.db, record.id)) ?? record;
}

/** The sweep (and the check before a listing): expires every due collaboration, of one person or all. */
export async function expireDueCollaborations(context: AppContext, userId?: number): Promise<number> {
  const now = context.clock.iso();
  let query = selectCollaborations(context.db).where("c.status", "in", EXPIRING).where("c.expires_at", "<=", now);
  if (userId !== undefined) query = query.where((eb) => eb.or([eb("c.requester_id", "=", userId), eb("c.target_id", "=", userId)]));
  let count = 0;
  for (const record of await query.execute()) if (await expireCollaboration(context, record)) count++;
  return count;
}
