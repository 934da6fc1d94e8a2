import { MESSAGE_KINDS, type MessageKindName, type SendMessageInput } from "@tandem/core";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { conflict, forbidden, notFound } from "../../http/errors";
import { newId } from "../../ids";
import { canonicalHash } from "./canonical-hash";
import { settleGrant } from "./grant-expiry";
import { findGrant, type GrantRecord, lockGrant, requireGrantParty } from "./grant-rows";
import { requireActiveGrant } from "./grant-status";
import { enqueueMessage, serializePayload } from "./message-queue";
import {
  clientMessageIdConflict,
  findByClientMessageId,
  findMessage,
  type MessageReceipt,
  toAttempt,
  toDelivery,
  toReceipt,
} from "./message-rows";
import { isEndpointRegistered } from "./routes-of-parties";
import { inWriteUnit, type WriteUnit } from "./write-unit";

function isMessageKind(kind: string): kind is MessageKindName {
  return (MESSAGE_KINDS as readonly string[]).includes(kind);
}

/**
 * The grant's requester sends a message; it goes to the frozen route, never anywhere the message
 * names. Idempotent per (grant, sender, clientMessageId): the same body again answers the first
 * receipt with `duplicate: true`, a different one is a 409. A `task_invite` takes one credit.
 * Pass `unit` to commit together with the caller's own change (then publish its events).
 */
export async function sendMessage(
  context: AppContext,
  sender: Principal,
  input: SendMessageInput,
  unit?: WriteUnit,
): Promise<MessageReceipt> {
  const { kind } = input;
  if (!isMessageKind(kind)) {
    throw forbidden("invalid_message_kind", `kind must be one of ${MESSAGE_KINDS.join(", ")}, not "${kind}"`);
  }
  const payload = serializePayload(input.payload);
  const replyTo = input.replyTo ?? null;
  const correlationId = input.correlationId ?? null;
  const requestHash = canonicalHash({ kind, payload: input.payload, replyTo, correlationId });
  const grantId = input.communicationSessionId;
  const found = await requireGrantParty(unit?.tx ?? context.db, grantId, sender.userId);
  if (found.requester_id !== sender.userId) {
    throw forbidden("not_grant_requester", "Only the grant's requester sends on it; the recipient answers with a reply");
  }
  await settleGrant(context, found, unit);
  return inWriteUnit(context, unit, async (u) => {
    const grant = (await lockGrant(u.tx, grantId)) as GrantRecord;
    if (input.clientMessageId !== undefined) {
      const key = { grantId, senderId: sender.userId, clientMessageId: input.clientMessageId };
      const earlier = await findByClientMessageId(u.tx, key);
      if (earlier) {
        if (earlier.request_hash !== requestHash) throw clientMessageIdConflict();
        return toReceipt(earlier, true);
      }
    }
    requireActiveGrant(grant, context.clock.iso());
    if (!(await isEndpointRegistered(u.tx, grant.frozen_endpoint_id))) {
      throw conflict("endpoint_revoked", "The runtime this grant is frozen to has been revoked");
    }
    const stored = await enqueueMessage(context, u, {
      grant,
      actor: sender,
      action: "message.send",
      senderId: sender.userId,
      senderDeviceId: sender.credential.kind === "device" ? sender.credential.deviceId : null,
      recipientId: grant.recipient_id,
      route: { endpointId: grant.frozen_endpoint_id as string, sessionHandle: grant.frozen_session_handle as string },
      targetKind: grant.target_kind,
      clientMessageId: input.clientMessageId ?? newId("cmid"),
      requestHash,
      kind,
      payload,
      replyTo,
      correlationId,
    });
    return toReceipt(stored, false);
  });
}

/** A message's delivery and ack attempts; visible to its sender and its recipient, nobody else. */
export async function getMessageStatus(context: AppContext, principal: Principal, id: string) {
  let message = await findMessage(context.db, id);
  if (!message || (message.sender_id !== principal.userId && message.recipient_id !== principal.userId)) {
    throw notFound(`message ${id}`);
  }
  const grant = await findGrant(context.db, message.grant_id);
  if (grant && (await settleGrant(context, grant)) !== grant) message = (await findMessage(context.db, id)) ?? message;
  const attempts = await context.db.selectFrom("delivery_attempts").selectAll().where("message_id", "=", id).orderBy("id").execute();
  return { success: true as const, delivery: toDelivery(message), attempts: attempts.map(toAttempt) };
}
