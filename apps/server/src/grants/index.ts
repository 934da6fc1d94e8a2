/**
 * What other areas of the delegation layer use: revoking grants when a permission is withdrawn
 * (network), opening an active grant and sending on it for an allowed delegation, and hooks
 * that run when a grant ends (approvals, delegations).
 */

export { canonicalHash } from "./canonical-hash";
export { creditBalance } from "./credits";
export { type GrantEndHook, type GrantEnding, onGrantEnd } from "./grant-ending";
export { settleGrant } from "./grant-expiry";
export { endGrantsBetween, type OpenActiveGrantInput, openActiveGrant } from "./grant-lifecycle";
export { findGrant, type GrantRecord, toGrantRow } from "./grant-rows";
export { currentGrantStatus, inactiveGrantReason } from "./grant-status";
export type { MessageReceipt } from "./message-rows";
export { sendMessage } from "./messages-service";
export { inWriteUnit, type WriteUnit } from "./write-unit";
