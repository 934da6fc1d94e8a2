import type { AppContext } from "../../context";
import { finishGrant } from "./grant-ending";
import { findGrant, type GrantRecord, lockGrant } from "./grant-rows";
import { currentGrantStatus } from "./grant-status";
import { inWriteUnit, type WriteUnit } from "./write-unit";

/** Records the expiry of one grant if its time has passed (checked again under the row lock). */
async function expireIfDue(context: AppContext, unit: WriteUnit, id: string): Promise<GrantRecord | undefined> {
  const grant = await lockGrant(unit.tx, id);
  if (!grant || grant.status === "expired" || currentGrantStatus(grant, context.clock.iso()) !== "expired") return grant;
  return finishGrant(context, unit, grant, "expired", "system");
}

/**
 * The lazy half of expiry: a grant read or used after its time has passed is recorded as expired
 * (with its deliveries, events and audit) before anything else looks at it.
 */
export async function settleGrant(context: AppContext, grant: GrantRecord, unit?: WriteUnit): Promise<GrantRecord> {
  if (currentGrantStatus(grant, context.clock.iso()) === grant.status) return grant;
  return (await inWriteUnit(context, unit, (u) => expireIfDue(context, u, grant.id))) ?? grant;
}

/** The grant with this id, settled; undefined when there is none. */
export async function findSettledGrant(context: AppContext, id: string): Promise<GrantRecord | undefined> {
  const grant = await findGrant(context.db, id);
  return grant && settleGrant(context, grant);
}

/**
 * The sweep (and the check before a listing): expires every grant whose time has passed, only
 * those `userId` is party to, if given.
 */
export async function expireDueGrants(context: AppContext, userId?: number): Promise<number> {
  const now = context.clock.iso();
  let query = context.db
    .selectFrom("grants")
    .select("id")
    .where((eb) =>
      eb.or([
        eb.and([eb("status", "=", "pending"), eb("request_expires_at", "<=", now)]),
        eb.and([eb("status", "=", "active"), eb("grant_expires_at", "<=", now)]),
      ]),
    );
  if (userId !== undefined) query = query.where((eb) => eb.or([eb("requester_id", "=", userId), eb("recipient_id", "=", userId)]));
  const due = await query.execute();
  for (const { id } of due) await inWriteUnit(context, undefined, (u) => expireIfDue(context, u, id));
  return due.length;
}
