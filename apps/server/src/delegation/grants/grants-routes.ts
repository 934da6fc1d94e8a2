import type { grantRoutes } from "@tandem/core";
import type { AppContext } from "../../context";
import { created, Reply } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { recordAck } from "./acks";
import { creditStanding } from "./credits";
import { expireDueGrants } from "./grant-expiry";
import { acceptGrant, declineGrant, getGrant, listGrants, requestGrant, revokeGrant } from "./grant-lifecycle";
import { validateInjection } from "./injection-validation";
import { sendOrReply } from "./message-or-reply";
import type { MessageReceipt } from "./message-rows";
import { getMessageStatus } from "./messages-service";
import { replyToMessage } from "./replies";

/** A new message is 201; the same one sent again answers its first receipt with 200. */
const receipt = (result: MessageReceipt) => new Reply(result.duplicate ? 200 : 201, result);

export function grantHandlers(context: AppContext): RouteHandlers<keyof typeof grantRoutes> {
  // Grants expire (and their bridges hear it) even when nobody reads them.
  context.maintenance.add("grants.expire", () => expireDueGrants(context));
  return {
    requestGrant: async ({ input, principal }) => created({ success: true, ...(await requestGrant(context, principal, input.body)) }),
    listGrants: async ({ principal }) => {
      const grants = await listGrants(context, principal.userId);
      // Bridges (device tokens) read the list as a bare array and call .map on the body itself.
      return principal.credential.kind === "device" ? grants : { success: true, grants };
    },
    getGrant: async ({ input, principal }) => ({ success: true, ...(await getGrant(context, principal.userId, input.params.id)) }),
    acceptGrant: async ({ input, principal }) => ({ success: true, ...(await acceptGrant(context, principal, input.params.id)) }),
    declineGrant: async ({ input, principal }) => ({ success: true, ...(await declineGrant(context, principal, input.params.id)) }),
    revokeGrant: async ({ input, principal }) => ({ success: true, ...(await revokeGrant(context, principal, input.params.id)) }),
    sendGrantMessage: async ({ input, principal }) => receipt(await sendOrReply(context, principal, input.body)),
    getGrantMessage: ({ input, principal }) => getMessageStatus(context, principal, input.params.id),
    ackGrantMessage: ({ input, principal }) => recordAck(context, principal, input.params.id, input.body),
    replyToGrantMessage: async ({ input, principal }) => {
      const { body, clientMessageId } = input.body;
      return receipt(await replyToMessage(context, principal, input.params.id, { payload: { text: body }, clientMessageId }));
    },
    validateInjection: ({ input, principal }) => validateInjection(context, principal, input.body),
    getCredits: async ({ principal }) => {
      const standing = await creditStanding(context.db, context.clock, context.config.creditAllowance, principal.userId);
      return { success: true, ...standing };
    },
  };
}
