import { recordAudit } from "../../audit/audit-log";
import type { DevicePrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { conflict } from "../../http/errors";
import { newId } from "../../ids";
import { canonicalHash } from "./canonical-hash";
import { findSettledGrant } from "./grant-expiry";
import { type GrantRecord, lockGrant } from "./grant-rows";
import { requireActiveGrant } from "./grant-status";
import { enqueueMessage, serializePayload } from "./message-queue";
import {
  clientMessageIdConflict,
  findByClientMessageId,
  findMessage,
  isTerminalDelivery,
  lockMessage,
  type MessageReceipt,
  type MessageRecord,
  requireOwningDevice,
  toReceipt,
} from "./message-rows";
import { isEndpointRegistered, type RuntimeRoute } from "./routes-of-parties";
import { inWriteUnit } from "./write-unit";

/** Envelopes of replies name this target kind: they travel a reply route, not a default route. */
export const REPLY_TARGET_KIND = "reply_route";

/**
 * The reverse of the way `original` came: to the requester's reply route when the requester sent
 * it, to the frozen route when it was itself a reply from the recipient.
 */
function replyRoute(grant: GrantRecord, original: MessageRecord): RuntimeRoute | null {
  const [endpointId, sessionHandle] =
    original.sender_id === grant.requester_id
      ? [grant.requester_reply_endpoint_id, grant.requester_reply_session_handle]
      : [grant.frozen_endpoint_id, grant.frozen_session_handle];
  return endpointId && sessionHandle ? { endpointId, sessionHandle } : null;
}

/**
 * The device a message was delivered to answers it. The reply is a new text message back along
 * the reverse route, in the same conversation (`replyTo` the original, `correlationId` carried
 * over); the original becomes `replied`. One reply per message: the same clientMessageId and
 * text again answer the first receipt as a duplicate, anything else is 409 `already_replied`.
 */
export async function replyToMessage(
  context: AppContext,
  device: DevicePrincipal,
  id: string,
  body: { payload: unknown; clientMessageId?: string | undefined },
): Promise<MessageReceipt> {
  const payloadValue = body.payload;
  const payload = serializePayload(payloadValue);
  const requestHash = canonicalHash({ kind: "text", payload: payloadValue, replyTo: id });
  const found = requireOwningDevice(await findMessage(context.db, id), device, id);
  await findSettledGrant(context, found.grant_id);
  return inWriteUnit(context, undefined, async (unit) => {
    const { tx } = unit;
    // Grant before message, the order revocation and expiry lock in, so they never deadlock.
    const grant = (await lockGrant(tx, found.grant_id)) as GrantRecord;
    const original = requireOwningDevice(await lockMessage(tx, id), device, id);
    const earlier = await tx
      .selectFrom("messages")
      .selectAll()
      .where("grant_id", "=", original.grant_id)
      .where("sender_id", "=", device.userId)
      .where("reply_to", "=", id)
      .executeTakeFirst();
    if (earlier) {
      if (earlier.client_message_id === body.clientMessageId && earlier.request_hash === requestHash) return toReceipt(earlier, true);
      throw conflict("already_replied", "This message has already been answered");
    }
    if (body.clientMessageId !== undefined) {
      const key = { grantId: original.grant_id, senderId: device.userId, clientMessageId: body.clientMessageId };
      if (await findByClientMessageId(tx, key)) throw clientMessageIdConflict();
    }
    requireActiveGrant(grant, context.clock.iso());
    if (isTerminalDelivery(original.status)) throw conflict("delivery_terminal", `The message's delivery is ${original.status}`);
    const route = replyRoute(grant, original);
    if (!route || !(await isEndpointRegistered(tx, route.endpointId))) {
      throw conflict("no_reply_route", "The sender has no reply route (no default route when they asked, or its runtime was revoked)");
    }
    const reply = await enqueueMessage(context, unit, {
      grant,
      actor: device,
      action: "message.reply",
      senderId: device.userId,
      senderDeviceId: device.credential.deviceId,
      recipientId: original.sender_id,
      route,
      targetKind: REPLY_TARGET_KIND,
      clientMessageId: body.clientMessageId ?? newId("cmid"),
      requestHash,
      kind: "text",
      payload,
      replyTo: id,
      correlationId: original.correlation_id ?? id,
    });
    const now = context.clock.iso();
    await tx.updateTable("messages").set({ status: "replied", terminal_at: now }).where("id", "=", id).execute();
    await recordAudit(tx, context.clock, {
      actor: device,
      action: "delivery.replied",
      objectType: "message",
      objectId: id,
      parties: [original.recipient_id, original.sender_id],
      detail: { from: original.status, replyId: reply.id },
    });
    return toReceipt(reply, false);
  });
}
