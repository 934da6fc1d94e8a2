import type { Kysely } from "kysely";
import { type AuditActor, recordAudit } from "../audit/audit-log";
import type { Clock } from "../clock";
import type { Schema } from "../db/schema";
import { ApiError } from "../http/errors";

/**
 * Credits: a per-user balance; each `task_invite` takes one. The balance only moves by single
 * conditional updates, so two concurrent invites can never both spend the last credit.
 */
export async function creditBalance(db: Kysely<Schema>, userId: number): Promise<number> {
  const row = await db.selectFrom("credits").select("balance").where("user_id", "=", userId).executeTakeFirst();
  return row ? Number(row.balance) : 0;
}

/** Sets a balance (operators, through `tandem-server credits set`). */
export async function setCreditBalance(
  tx: Kysely<Schema>,
  clock: Clock,
  userId: number,
  balance: number,
  actor: AuditActor,
): Promise<number> {
  const previous = await creditBalance(tx, userId);
  const now = clock.iso();
  await tx
    .insertInto("credits")
    .values({ user_id: userId, balance, updated_at: now })
    .onConflict((oc) => oc.column("user_id").doUpdateSet({ balance, updated_at: now }))
    .execute();
  await recordAudit(tx, clock, {
    actor,
    action: "credits.set",
    objectType: "credits",
    objectId: userId,
    parties: [userId],
    detail: { previous, balance },
  });
  return balance;
}

/**
 * Takes one credit for a task invite, inside the transaction that stores the message: if the
 * message is refused later in that transaction, the credit comes back with the rollback.
 */
export async function reserveCredit(tx: Kysely<Schema>, clock: Clock, userId: number, messageId: string, actor: AuditActor): Promise<void> {
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
  await recordAudit(tx, clock, {
    actor,
    action: "credits.release",
    objectType: "message",
    objectId: message.id,
    parties: [message.sender_id],
  });
}
