import type { ValidateInjectionBody } from "@tandem/core";
import type { DevicePrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { hasAgentPermission } from "../../people/network/permissions";
import { findEndpointSession, inboundRefusal } from "../runtime/sessions-service";
import { findSettledGrant } from "./grant-expiry";
import { currentGrantStatus, inactiveGrantReason } from "./grant-status";
import { findMessage, isTerminalDelivery } from "./message-rows";

export type InjectionVerdict = { success: true; valid: true } | { success: true; valid: false; reason: string };

const reject = (reason: string): InjectionVerdict => ({ success: true, valid: false, reason });

/**
 * Whether a bridge may put a delivered message into a session now. The checks run in the order
 * bridges rely on (runtime-wire.md, "Injection validation"); anything missing or unknown fails.
 */
async function check(context: AppContext, device: DevicePrincipal, body: ValidateInjectionBody): Promise<InjectionVerdict> {
  const grantId = body.communicationSessionId ?? body.commSessionId;
  const message = body.messageId ? await findMessage(context.db, body.messageId) : undefined;
  if (!message || !grantId || message.grant_id !== grantId) return reject("wrong_target");
  if (body.endpointId !== device.credential.id || message.target_endpoint_id !== device.credential.id) {
    return reject("endpoint_not_owned");
  }
  const grant = await findSettledGrant(context, grantId);
  if (!grant) return reject("wrong_target");
  const now = context.clock.iso();
  const status = currentGrantStatus(grant, now);
  if (status !== "active") return reject(inactiveGrantReason(status));
  // The grant rests on the recipient's agent permission; withdrawing it revokes the grant, and
  // this check holds even for a grant that escaped that (fail closed).
  if (!(await hasAgentPermission(context.db, grant.recipient_id, grant.requester_id))) return reject(inactiveGrantReason("revoked"));
  // Read again: settling or a revocation may have ended the delivery since the first read.
  const current = (await findMessage(context.db, message.id)) ?? message;
  if (isTerminalDelivery(current.status)) return reject("delivery_terminal");
  if (current.expires_at <= now) return reject("message_expired");
  const sessionHandle = body.sessionHandle ?? current.target_session_handle;
  if (sessionHandle !== current.target_session_handle) return reject("wrong_target");
  const refusal = inboundRefusal(await findEndpointSession(context.db, current.target_endpoint_id, sessionHandle));
  return refusal ? reject(refusal) : { success: true, valid: true };
}

/** Always an answer, never an error: if the checks themselves fail, the injection is refused. */
export async function validateInjection(
  context: AppContext,
  device: DevicePrincipal,
  body: ValidateInjectionBody,
): Promise<InjectionVerdict> {
  try {
    return await check(context, device, body);
  } catch (error) {
    context.logger.error({ err: error }, "injection validation failed; refusing");
    return reject("validation_unavailable");
  }
}
