import { type AuditActor, recordAudit } from "../../audit/audit-log";
import type { AppContext } from "../../context";
import { endOpenDeliveries } from "./delivery-ending";
import { notifyRecipient, notifyRequester } from "./grant-events";
import { type GrantRecord, toGrantRow } from "./grant-rows";
import type { WriteUnit } from "./write-unit";

export type GrantEndStatus = "declined" | "revoked" | "expired";

export interface GrantEnding {
  /** The grant as it is now (status already final). */
  readonly grant: GrantRecord;
  /** The status it had before. */
  readonly previousStatus: GrantRecord["status"];
  readonly status: GrantEndStatus;
  readonly actor: AuditActor;
}

/**
 * Runs inside the transaction that ends a grant, after its deliveries are ended: other areas
 * (tool approvals, collaborations) end what hangs off the grant in the same commit.
 */
export type GrantEndHook = (context: AppContext, unit: WriteUnit, ending: GrantEnding) => Promise<void>;

const hooks = new Set<GrantEndHook>();

/** Registers a hook for every grant that ends (registering the same function twice is a no-op). */
export function onGrantEnd(hook: GrantEndHook): void {
  hooks.add(hook);
}

const ACTIONS: Record<GrantEndStatus, string> = { declined: "grant.decline", revoked: "grant.revoke", expired: "grant.expire" };

/**
 * Moves a grant the caller has locked and checked to a final status, with all that follows: open
 * deliveries end (revoked or expired), hooks run, both sides hear `grant.<status>` (a decline
 * concerns only the requester), and the change is audited.
 */
export async function finishGrant(
  context: AppContext,
  unit: WriteUnit,
  grant: GrantRecord,
  status: GrantEndStatus,
  actor: AuditActor,
): Promise<GrantRecord> {
  const { tx, events } = unit;
  const now = context.clock.iso();
  const ended = await tx
    .updateTable("grants")
    .set({ status, ended_at: now, ...(status === "revoked" ? { revoked_at: now } : {}) })
    .where("id", "=", grant.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const messages = status === "declined" ? [] : await endOpenDeliveries(tx, context.clock, grant.id, status, actor);
  for (const hook of hooks) await hook(context, unit, { grant: ended, previousStatus: grant.status, status, actor });
  const type = `grant.${status}` as const;
  const data = toGrantRow(ended);
  await notifyRequester(tx, events, ended, type, data);
  if (status !== "declined") await notifyRecipient(tx, events, ended, type, data);
  await recordAudit(tx, context.clock, {
    actor,
    action: ACTIONS[status],
    objectType: "grant",
    objectId: grant.id,
    parties: [grant.requester_id, grant.recipient_id],
    detail: { previousStatus: grant.status, ...(messages.length > 0 ? { deliveriesEnded: messages } : {}) },
  });
  return ended;
}
