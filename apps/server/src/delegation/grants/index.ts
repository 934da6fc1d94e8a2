/**
 * What other areas of the delegation layer use: revoking grants when a permission is withdrawn
 * (network), checking a grant a tool approval names (approvals), opening an active grant and
 * sending on it for an allowed delegation (delegations), and hooks that run when a grant ends.
 */

export { canonicalHash } from "./canonical-hash";
export { creditStanding } from "./credits";
export { type GrantEndHook, type GrantEnding, onGrantEnd } from "./grant-ending";
export { settleGrant } from "./grant-expiry";
export {
  endGrantsBetween,
  endGrantsFrozenTo,
  grantTtlMinutes,
  type OpenActiveGrantInput,
  openActiveGrant,
  permittedUnderLock,
} from "./grant-lifecycle";
export { findGrant, type GrantRecord, grantNotFound, toGrantRow } from "./grant-rows";
export { currentGrantStatus, inactiveGrantReason, requireActiveGrant } from "./grant-status";
export { serializePayload } from "./message-queue";
export { findMessage, type MessageReceipt, toReceipt } from "./message-rows";
export { sendMessage } from "./messages-service";
export { isEndpointRegistered } from "./routes-of-parties";
export { inWriteUnit, type WriteUnit } from "./write-unit";
