import type { AckPhaseName, DeliveryStatusName, MessageAckBody } from "@tandem/core";
import { meterDevice } from "../../agent/usage/meters";
import { recordAudit } from "../../audit/audit-log";
import type { DevicePrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { MessagesTable } from "../../db/schema";
import { releaseCredit } from "./credits";
import { findSettledGrant } from "./grant-expiry";
import { findMessage, isTerminalDelivery, lockMessage, requireOwningDevice } from "./message-rows";
import { inWriteUnit } from "./write-unit";

/** The forward order of open deliveries; an ack never moves one back. */
const RANK: Partial<Record<DeliveryStatusName, number>> = {
  queued: 0,
  dispatched: 1,
  device_acked: 2,
  runtime_pending: 3,
  runtime_acked: 4,
};

/** What each phase moves a delivery to, and which of its timestamps it records. */
const PHASES: Record<AckPhaseName, { status: DeliveryStatusName; stamp: keyof MessagesTable }> = {
  device_ack: { status: "device_acked", stamp: "device_ack_received_at" },
  runtime_pending: { status: "runtime_pending", stamp: "runtime_pending_at" },
  runtime_ack: { status: "runtime_acked", stamp: "runtime_ack_received_at" },
  runtime_failed: { status: "failed", stamp: "terminal_at" },
};

export interface AckResult {
  success: true;
  recorded: "state" | "audit_only";
  status: DeliveryStatusName;
  deliveryId: string;
}

/**
 * The target device reports how far a delivery got. Only that device may (so receipts cannot be
 * spoofed); each (attemptId, phase) counts once and a repeat answers as the first did; states
 * only move forward; after a terminal state the ack is kept for audit only.
 */
export async function recordAck(context: AppContext, device: DevicePrincipal, id: string, ack: MessageAckBody): Promise<AckResult> {
  const found = requireOwningDevice(await findMessage(context.db, id), device, id);
  await findSettledGrant(context, found.grant_id);
  return inWriteUnit(context, undefined, async (unit) => {
    const { tx } = unit;
    const message = requireOwningDevice(await lockMessage(tx, id), device, id);
    const answer = (recorded: AckResult["recorded"], status: DeliveryStatusName): AckResult => ({
      success: true,
      recorded,
      status,
      deliveryId: message.delivery_id,
    });
    const earlier = await tx
      .selectFrom("delivery_attempts")
      .select("recorded")
      .where("message_id", "=", id)
      .where("attempt_id", "=", ack.attemptId)
      .where("phase", "=", ack.phase)
      .executeTakeFirst();
    if (earlier) return answer(earlier.recorded, message.status);

    const now = context.clock.iso();
    const recorded = isTerminalDelivery(message.status) ? "audit_only" : "state";
    let status = message.status;
    if (recorded === "state") {
      const phase = PHASES[ack.phase];
      const forward = phase.status === "failed" || (RANK[phase.status] ?? 0) > (RANK[message.status] ?? 0);
      if (forward) status = phase.status;
      await tx
        .updateTable("messages")
        .set({
          status,
          // An ack proves the device has the message, whatever happened to the dispatch record.
          dispatched_at: message.dispatched_at ?? now,
          [phase.stamp]: message[phase.stamp] ?? now,
          ...(ack.resultCode != null ? { result_code: ack.resultCode } : {}),
          ...(ack.runtimeAckId != null ? { runtime_ack_id: ack.runtimeAckId } : {}),
          ...(status === "failed" && message.result_code === null && ack.resultCode == null ? { result_code: "runtime_failed" } : {}),
        })
        .where("id", "=", id)
        .execute();
      if (status === "failed") await releaseCredit(tx, context.clock, message, device);
    }
    await tx
      .insertInto("delivery_attempts")
      .values({
        message_id: id,
        attempt_id: ack.attemptId,
        phase: ack.phase,
        result_code: ack.resultCode ?? null,
        retryable: ack.retryable == null ? null : ack.retryable ? 1 : 0,
        runtime_ack_id: ack.runtimeAckId ?? null,
        usage: ack.usage ? JSON.stringify(ack.usage) : null,
        recorded,
        created_at: now,
      })
      .execute();
    // Acknowledging a delivery makes the device active this month.
    await meterDevice(context, unit, device.userId, device.credential.deviceId);
    await recordAudit(tx, context.clock, {
      actor: device,
      action: "delivery.ack",
      objectType: "message",
      objectId: id,
      parties: [message.recipient_id, message.sender_id],
      detail: { phase: ack.phase, attemptId: ack.attemptId, recorded, from: message.status, to: status },
    });
    return answer(recorded, status);
  });
}
