import type { SendMessageInput } from "@tandem/core";
import type { DevicePrincipal, Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { forbidden, notFound } from "../../http/errors";
import { findGrant } from "./grant-rows";
import { findMessage, type MessageReceipt } from "./message-rows";
import { sendMessage } from "./messages-service";
import { replyToMessage } from "./replies";

/**
 * `POST /local-agent/messages`. The grant's requester sends on it; the recipient's bridge answers
 * a message delivered to it by posting here with `replyTo` (runtime-wire.md, "What a bridge does
 * after pairing"), which is the same as `POST /local-agent/messages/{replyTo}/reply`: it travels
 * the reverse of the frozen route and carries the original's correlationId. A reply names a
 * message of this grant; anything else is 404, as the reply route answers.
 */
export async function sendOrReply(context: AppContext, sender: Principal, input: SendMessageInput): Promise<MessageReceipt> {
  const replyTo = input.replyTo ?? null;
  if (replyTo === null || sender.credential.kind !== "device") return sendMessage(context, sender, input);
  const grant = await findGrant(context.db, input.communicationSessionId);
  // The requester's own messages (replyTo or not) keep the send path; only the recipient answers this way.
  if (!grant || grant.recipient_id !== sender.userId || grant.requester_id === sender.userId) {
    return sendMessage(context, sender, input);
  }
  const original = await findMessage(context.db, replyTo);
  if (!original || original.grant_id !== grant.id) throw notFound(`message ${replyTo} on this communication session`);
  if (input.kind !== "text") throw forbidden("invalid_message_kind", `A reply is a text message, not "${input.kind}"`);
  return replyToMessage(context, sender as DevicePrincipal, replyTo, { payload: input.payload, clientMessageId: input.clientMessageId });
}
