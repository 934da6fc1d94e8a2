import type { DeliveryStatusName, MessageReceipt } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import type { DevicePrincipal } from "../../auth/principal";
import type { DeliveryAttemptsTable, MessagesTable, Schema } from "../../db/schema";
import { conflict, forbidden, notFound } from "../../http/errors";

/** A message and its delivery, as stored (one row holds both). */
export type MessageRecord = Selectable<MessagesTable>;

/** Deliveries in these states never move again; a later ack is recorded for audit only. */
export const TERMINAL_DELIVERY_STATUSES = ["replied", "failed", "expired", "revoked"] as const satisfies readonly DeliveryStatusName[];
export const OPEN_DELIVERY_STATUSES = [
  "queued",
  "dispatched",
  "device_acked",
  "runtime_pending",
  "runtime_acked",
] as const satisfies readonly DeliveryStatusName[];

export function isTerminalDelivery(status: DeliveryStatusName): boolean {
  return (TERMINAL_DELIVERY_STATUSES as readonly string[]).includes(status);
}

export type { MessageReceipt };

/** What a send or a reply answers; `duplicate` when it answers an earlier send again. */
export function toReceipt(message: MessageRecord, duplicate: boolean): MessageReceipt {
  return {
    success: true,
    messageId: message.id,
    deliveryId: message.delivery_id,
    status: message.status,
    duplicate,
    queuedAt: message.queued_at,
    communicationSessionId: message.grant_id,
    commSessionId: message.grant_id,
    sequence: Number(message.sequence),
    correlationId: message.correlation_id,
  };
}

export function toDelivery(message: MessageRecord) {
  return {
    deliveryId: message.delivery_id,
    status: message.status,
    queuedAt: message.queued_at,
    dispatchedAt: message.dispatched_at,
    deviceAckReceivedAt: message.device_ack_received_at,
    runtimePendingAt: message.runtime_pending_at,
    runtimeAckReceivedAt: message.runtime_ack_received_at,
    terminalAt: message.terminal_at,
    resultCode: message.result_code,
    runtimeAckId: message.runtime_ack_id,
  };
}

export function toAttempt(attempt: Selectable<DeliveryAttemptsTable>) {
  return {
    attemptId: attempt.attempt_id,
    phase: attempt.phase,
    resultCode: attempt.result_code,
    retryable: attempt.retryable === null ? null : attempt.retryable === 1,
    runtimeAckId: attempt.runtime_ack_id,
    createdAt: attempt.created_at,
  };
}

/** The envelope of a `message.dispatch` event, as bridges read it. */
export function toEnvelope(message: MessageRecord, targetKind: string) {
  return {
    id: message.id,
    clientMessageId: message.client_message_id,
    communicationSessionId: message.grant_id,
    senderPrincipalId: String(message.sender_id),
    senderDeviceId: message.sender_device_id,
    target: {
      kind: targetKind,
      principalId: String(message.recipient_id),
      endpointId: message.target_endpoint_id,
      sessionHandle: message.target_session_handle,
    },
    kind: message.kind,
    payload: JSON.parse(message.payload) as unknown,
    replyTo: message.reply_to,
    correlationId: message.correlation_id,
    sequence: Number(message.sequence),
    createdAt: message.created_at,
    expiresAt: message.expires_at,
  };
}

export async function findMessage(db: Kysely<Schema>, id: string): Promise<MessageRecord | undefined> {
  return db.selectFrom("messages").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The message a sender already sent on a grant under this clientMessageId (the idempotency key), if any. */
export async function findByClientMessageId(
  db: Kysely<Schema>,
  key: { grantId: string; senderId: number; clientMessageId: string },
): Promise<MessageRecord | undefined> {
  return db
    .selectFrom("messages")
    .selectAll()
    .where("grant_id", "=", key.grantId)
    .where("sender_id", "=", key.senderId)
    .where("client_message_id", "=", key.clientMessageId)
    .executeTakeFirst();
}

/** 409 for a clientMessageId already used on the grant for a message with another body. */
export const clientMessageIdConflict = () =>
  conflict("client_message_id_conflict", "This clientMessageId was already used with a different message");

/** Reads a message and locks its row until the transaction ends (see `lockGrant`). */
export async function lockMessage(tx: Kysely<Schema>, id: string): Promise<MessageRecord | undefined> {
  return tx.selectFrom("messages").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}

/**
 * Only the device the message was delivered to may ack or answer it. Someone else's device
 * learns nothing (404); another device of the recipient is told it is the wrong one (403).
 */
export function requireOwningDevice(message: MessageRecord | undefined, device: DevicePrincipal, id: string): MessageRecord {
  if (!message || message.recipient_id !== device.userId) throw notFound(`message ${id}`);
  if (message.target_endpoint_id !== device.credential.id) {
    throw forbidden("not_owning_device", "Only the device the message was delivered to may do this");
  }
  return message;
}
