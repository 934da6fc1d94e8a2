import { MAX_PAYLOAD_BYTES, type MessageKindName } from "@tandem/core";
import { type AuditActor, recordAudit } from "../../audit/audit-log";
import type { AppContext } from "../../context";
import { ApiError, badRequest } from "../../http/errors";
import { newId } from "../../ids";
import { reserveCredit } from "./credits";
import type { GrantRecord } from "./grant-rows";
import { type MessageRecord, toEnvelope } from "./message-rows";
import type { RuntimeRoute } from "./routes-of-parties";
import type { WriteUnit } from "./write-unit";

/** A payload as stored: JSON of at most 32 KiB (413 `payload_too_large` beyond). */
export function serializePayload(payload: unknown): string {
  const json = JSON.stringify(payload);
  if (json === undefined) throw badRequest("invalid_request", "payload must be JSON");
  if (Buffer.byteLength(json, "utf8") > MAX_PAYLOAD_BYTES) {
    throw new ApiError(413, "payload_too_large", `The payload is larger than ${MAX_PAYLOAD_BYTES} bytes of JSON`);
  }
  return json;
}

export interface OutgoingMessage {
  /** The grant, locked by the caller and checked to be active. */
  grant: GrantRecord;
  actor: AuditActor;
  /** The audit action: a message on the grant, or the answer to one. */
  action: "message.send" | "message.reply";
  senderId: number;
  senderDeviceId: string | null;
  recipientId: number;
  /** Where it goes, and the `target.kind` its envelope names. */
  route: RuntimeRoute;
  targetKind: string;
  clientMessageId: string;
  requestHash: string;
  kind: MessageKindName;
  /** Serialized by {@link serializePayload}. */
  payload: string;
  replyTo: string | null;
  correlationId: string | null;
}

/**
 * Stores a message with its delivery (queued), numbered next on its grant, and appends its
 * `message.dispatch` to the target endpoint's log in the same transaction. A task invite takes
 * its sender's credit here too, so an invite without credit leaves nothing behind.
 */
export async function enqueueMessage(context: AppContext, unit: WriteUnit, message: OutgoingMessage): Promise<MessageRecord> {
  const { tx, events } = unit;
  const id = newId("msg");
  const creditReserved =
    message.kind === "task_invite" &&
    (await reserveCredit(tx, context.clock, context.config.creditAllowance, message.senderId, id, message.actor));
  const { message_sequence: sequence } = await tx
    .updateTable("grants")
    .set((eb) => ({ message_sequence: eb("message_sequence", "+", 1) }))
    .where("id", "=", message.grant.id)
    .returning("message_sequence")
    .executeTakeFirstOrThrow();
  const now = context.clock.iso();
  const stored = await tx
    .insertInto("messages")
    .values({
      id,
      delivery_id: newId("dlv"),
      grant_id: message.grant.id,
      sender_id: message.senderId,
      sender_device_id: message.senderDeviceId,
      recipient_id: message.recipientId,
      target_endpoint_id: message.route.endpointId,
      target_session_handle: message.route.sessionHandle,
      client_message_id: message.clientMessageId,
      request_hash: message.requestHash,
      kind: message.kind,
      payload: message.payload,
      reply_to: message.replyTo,
      correlation_id: message.correlationId,
      sequence,
      credit_reserved: creditReserved ? 1 : 0,
      created_at: now,
      // A message lives no longer than the grant that carries it.
      expires_at: message.grant.grant_expires_at ?? now,
      status: "queued",
      queued_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await events.append(tx, message.route.endpointId, "message.dispatch", {
    envelope: toEnvelope(stored, message.targetKind),
    deliveryId: stored.delivery_id,
  });
  await recordAudit(tx, context.clock, {
    actor: message.actor,
    action: message.action,
    objectType: "message",
    objectId: id,
    parties: [message.senderId, message.recipientId],
    detail: { communicationSessionId: message.grant.id, kind: message.kind, sequence, deliveryId: stored.delivery_id },
  });
  return stored;
}
