import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { type ApiError, conflict, notFound } from "../../http/errors";
import { findDefaultRoute } from "../runtime/default-route-service";
import { type PairStatusReason, pairStatus } from "../runtime/pair-status";

export interface RuntimeRoute {
  endpointId: string;
  sessionHandle: string;
}

/** Why a grant cannot be frozen on the recipient's default route, from the reason pair status gives. */
function unpairedError(reason: PairStatusReason): ApiError {
  switch (reason) {
    case "no_default_route":
      return conflict("no_default_route", "The recipient has no default route: no runtime is set to take inbound work");
    case "endpoint_not_found":
    case "endpoint_offline":
      return conflict("default_route_offline", "The recipient's default runtime is offline or revoked");
    default:
      return conflict("default_route_unavailable", "The recipient's default session is closed or does not accept inbound messages");
  }
}

/**
 * Where a grant to `recipientId` goes: their default route, which must lead to an online
 * endpoint and an open session that accepts inbound work (the owner's pair status, read in
 * `tx`). Accepting freezes the answer.
 */
export async function resolveInboundRoute(context: AppContext, tx: Kysely<Schema>, recipientId: number): Promise<RuntimeRoute> {
  const status = await pairStatus(context, recipientId, tx);
  if (!status.paired) throw unpairedError(status.reason);
  return { endpointId: status.endpoint.endpointId, sessionHandle: status.sessionHandle };
}

/**
 * Where replies to a requester go: the endpoint and session they name (which must be their own,
 * registered and open), or else their default route as it is now (none is allowed: a script
 * with only a user key can still ask, it just cannot be answered by reply).
 */
export async function resolveReplyRoute(
  tx: Kysely<Schema>,
  requesterId: number,
  named: { replyEndpointId?: string | undefined; replySessionHandle?: string | undefined },
): Promise<RuntimeRoute | null> {
  if (named.replyEndpointId === undefined || named.replySessionHandle === undefined) {
    const route = await findDefaultRoute(tx, requesterId);
    return route ? { endpointId: route.endpoint_id, sessionHandle: route.session_handle } : null;
  }
  const session = await tx
    .selectFrom("runtime_sessions")
    .innerJoin("runtime_endpoints", "runtime_endpoints.id", "runtime_sessions.endpoint_id")
    .select(["runtime_sessions.state"])
    .where("runtime_sessions.handle", "=", named.replySessionHandle)
    .where("runtime_endpoints.id", "=", named.replyEndpointId)
    .where("runtime_endpoints.owner_id", "=", requesterId)
    .where("runtime_endpoints.revoked_at", "is", null)
    .executeTakeFirst();
  if (!session || session.state === "closed")
    throw notFound(`reply endpoint ${named.replyEndpointId} with an open session ${named.replySessionHandle}`);
  return { endpointId: named.replyEndpointId, sessionHandle: named.replySessionHandle };
}

/** Whether an endpoint can still be delivered to (registered and not revoked). */
export async function isEndpointRegistered(tx: Kysely<Schema>, endpointId: string | null): Promise<boolean> {
  if (endpointId === null) return false;
  const row = await tx
    .selectFrom("runtime_endpoints")
    .select("id")
    .where("id", "=", endpointId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  return row !== undefined;
}
