import type { GrantStatus } from "../../db/schema";
import { ApiError } from "../../http/errors";
import type { GrantRecord } from "./grant-rows";

/**
 * The status a grant has at `nowIso`, counting an expiry that has passed but that no sweep has
 * recorded yet. Every decision goes by this, so a stopped timer never lets an old grant work.
 */
export function currentGrantStatus(grant: GrantRecord, nowIso: string): GrantStatus {
  if (grant.status === "pending" && grant.request_expires_at <= nowIso) return "expired";
  if (grant.status === "active" && grant.grant_expires_at !== null && grant.grant_expires_at <= nowIso) return "expired";
  return grant.status;
}

/** `communication_session_expired|revoked|declined|not_active`: why a grant carries nothing now. */
export function inactiveGrantReason(status: GrantStatus): string {
  return status === "pending" || status === "active" ? "communication_session_not_active" : `communication_session_${status}`;
}

/** 409 for a message, reply or tool approval on a grant that is not active. */
export function inactiveGrantError(status: GrantStatus): ApiError {
  return new ApiError(409, inactiveGrantReason(status), `The communication session is ${status}, not active`);
}

/** Only an active grant carries anything: otherwise the 409 {@link inactiveGrantError}. */
export function requireActiveGrant(grant: GrantRecord, nowIso: string): void {
  const status = currentGrantStatus(grant, nowIso);
  if (status !== "active") throw inactiveGrantError(status);
}
