import type { Kysely } from "kysely";
import { meterCredits } from "../../agent/usage/meters";
import { type AuditActor, recordAudit } from "../../audit/audit-log";
import type { Clock } from "../../clock";
import type { Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";

/** The operator's setting for users without a set balance: unlimited, or Credits per calendar month (UTC). */
export type CreditAllowance = number | "unlimited";

/**
 * Where a user's Credits stand. `balance` is null only when unlimited. `source`: `set` by an
 * operator (honoured as it is), the monthly `allowance`, or `unlimited`.
 */
export interface CreditStanding {
  balance: number | null;
  unlimited: boolean;
  monthlyAllowance: number | null;
  source: "set" | "allowance" | "unlimited";
}

/** The month an allowance belongs to, `2026-11` (UTC). */
function allowancePeriod(clock: Clock): string {
  return clock.iso().slice(0, 7);
}

/**
 * Credits: each `task_invite` takes one. A balance an operator set is what counts; without one,
 * the operator's allowance setting does. The balance only moves by single conditional updates, so
 * two concurrent invites can never both spend the last credit.
 */
export async function creditStanding(
  db: Kysely<Schema>,
  clock: Clock,
  allowance: CreditAllowance,
  userId: number,
): Promise<CreditStanding> {
  const row = await db.selectFrom("credits").select(["balance", "allowance_period"]).where("user_id", "=", userId).executeTakeFirst();
  if (row && row.allowance_period === null) {
    return { balance: Number(row.balance), unlimited: false, monthlyAllowance: null, source: "set" };
  }
  if (allowance === "unlimited") return { balance: null, unlimited: true, monthlyAllowance: null, source: "unlimited" };
  // What is left of this month's allowance; a month not spent from yet has all of it.
  const balance = row?.allowance_period === allowancePeriod(clock) ? Number(row.balance) : allowance;
  return { balance, unlimited: false, monthlyAllowance: allowance, source: "allowance" };
}

/** Sets a balance (operators, through `tandem-server credits set`); it then no longer follows the allowance. */
export async function setCreditBalance(
  tx: Kysely<Schema>,
  clock: Clock,
  userId: number,
  balance: number,
  actor: AuditActor,
): Promise<number> {
  const previous = await tx.selectFrom("credits").select("balance").where("user_id", "=", userId).executeTakeFirst();
  const now = clock.iso();
  await tx
    .insertInto("credits")
    .values({ user_id: userId, balance, updated_at: now, allowance_period: null })
    .onConflict((oc) => oc.column("user_id").doUpdateSet({ balance, updated_at: now, allowance_period: null }))
    .execute();
  await recordAudit(tx, clock, {
    actor,
    action: "credits.set",
    objectType: "credits",
    objectId: userId,
    parties: [userId],
    detail: { previous: previous ? Number(previous.balance) : null, balance },
  });
  return balance;
}

/**
 * A user on the monthly allowance gets this month's in full the first time they spend in it: a
 * missing row is made, a row of an earlier month refilled. A set balance is never touched (the
 * conflict update skips it), and concurrent first invites fill it once.
 */
async function fillMonthlyAllowance(tx: Kysely<Schema>, clock: Clock, userId: number, allowance: number): Promise<void> {
  const period = allowancePeriod(clock);
  const now = clock.iso();
  await tx
    .insertInto("credits")
    .values({ user_id: userId, balance: allowance, updated_at: now, allowance_period: period })
    .onConflict((oc) =>
      oc
        .column("user_id")
        .doUpdateSet({ balance: allowance, updated_at: now, allowance_period: period })
        .where("credits.allowance_period", "is not", null)
        .where("credits.allowance_period", "<>", period),
    )
    .execute();
}

/**
 * Takes one credit for a task invite, inside the transaction that stores the message: if the
 * message is refused later in that transaction, the credit comes back with the rollback. Answers
 * whether a credit was taken: an unlimited user spends none (and so gets none back).
 */
export async function reserveCredit(
  tx: Kysely<Schema>,
  clock: Clock,
  allowance: CreditAllowance,
  userId: number,
  messageId: string,
  actor: AuditActor,
): Promise<boolean> {
  const row = await tx.selectFrom("credits").select("allowance_period").where("user_id", "=", userId).executeTakeFirst();
  const set = row !== undefined && row.allowance_period === null;
  if (!set) {
    if (allowance === "unlimited") return false;
    await fillMonthlyAllowance(tx, clock, userId, allowance);
  }
  const result = await tx
    .updateTable("credits")
    .set((eb) => ({ balance: eb("balance", "-", 1), updated_at: clock.iso() }))
    .where("user_id", "=", userId)
    .where("balance", ">=", 1)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) {
    throw new ApiError(402, "insufficient_credits", "A task_invite needs one Credit and the balance is 0");
  }
  await recordAudit(tx, clock, { actor, action: "credits.reserve", objectType: "message", objectId: messageId, parties: [userId] });
  await meterCredits(tx, clock, { userId }, 1);
  return true;
}

/**
 * Gives back the credit of a task invite whose delivery ended (revoked, expired, failed) before
 * the runtime acknowledged it: the recipient never took the task on, so nothing was spent.
 */
export async function releaseCredit(
  tx: Kysely<Schema>,
  clock: Clock,
  message: { id: string; sender_id: number },
  actor: AuditActor,
): Promise<void> {
  const taken = await tx
    .updateTable("messages")
    .set({ credit_reserved: 0 })
    .where("id", "=", message.id)
    .where("credit_reserved", "=", 1)
    .where("runtime_ack_received_at", "is", null)
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) === 0) return;
  await tx
    .updateTable("credits")
    .set((eb) => ({ balance: eb("balance", "+", 1), updated_at: clock.iso() }))
    .where("user_id", "=", message.sender_id)
    .execute();
  // The month it is given back in counts one fewer.
  await meterCredits(tx, clock, { userId: message.sender_id }, -1);
  await recordAudit(tx, clock, {
    actor,
    action: "credits.release",
    objectType: "message",
    objectId: message.id,
    parties: [message.sender_id],
  });
}
