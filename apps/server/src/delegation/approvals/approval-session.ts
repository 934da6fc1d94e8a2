import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import type { GrantRecord } from "../grants";
import { findEndpointSession } from "../runtime/sessions-service";

/**
 * The session of the owner's runtime a tool approval is for. Bridges send their runtime's own
 * session id in `sessionHandle` (`claude-managed-1`), not the handle the server knows
 * (runtime-wire.md, "What a bridge does after pairing"): a handle that is not a session of the
 * asking endpoint is such an id, and the approval belongs to the session the grant is frozen on.
 * Only the grant and the asking device decide, so the id can never point an approval elsewhere.
 */
export async function approvalSessionHandle(
  db: Kysely<Schema>,
  endpointId: string,
  grant: GrantRecord,
  requested: string | undefined,
): Promise<string | null> {
  if (requested !== undefined && (await findEndpointSession(db, endpointId, requested))) return requested;
  return grant.frozen_session_handle;
}
