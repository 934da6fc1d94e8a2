import type { Kysely } from "kysely";
import type { AppContext } from "../context";
import type { Schema } from "../db/schema";
import { conflict, notFound } from "../http/errors";
import { isEndpointOnline } from "../runtime/presence";

export interface RuntimeRoute {
  endpointId: string;
  sessionHandle: string;
}

/**
 * Where a grant to `recipientId` goes: their default route, which must lead to an online
 * endpoint and an open session that accepts inbound work. Accepting freezes the answer.
 */
export async function resolveInboundRoute(context: AppContext, tx: Kysely<Schema>, recipientId: number): Promise<RuntimeRoute> {
  const route = await tx.selectFrom("default_routes").selectAll().where("owner_id", "=", recipientId).executeTakeFirst();
  if (!route) throw conflict("no_default_route", "The recipient has no default route: no runtime is set to take inbound work");
  const endpoint = await tx
    .selectFrom("runtime_endpoints")
    .select(["last_seen_at", "revoked_at"])
    .where("id", "=", route.endpoint_id)
    .where("owner_id", "=", recipientId)
    .executeTakeFirst();
  if (!endpoint || !isEndpointOnline(endpoint, context.clock.nowMs(), context.config.presenceTimeoutMs)) {
    throw conflict("default_route_offline", "The recipient's default runtime is offline or revoked");
  }
  const session = await tx
    .selectFrom("runtime_sessions")
    .select(["state", "allow_inbound"])
    .where("handle", "=", route.session_handle)
    .where("endpoint_id", "=", route.endpoint_id)
    .executeTakeFirst();
  if (!session || session.state === "closed" || session.allow_inbound !== 1) {
    throw conflict("default_route_unavailable", "The recipient's default session is closed or does not accept inbound messages");
  }
  return { endpointId: route.endpoint_id, sessionHandle: route.session_handle };
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
    const route = await tx.selectFrom("default_routes").selectAll().where("owner_id", "=", requesterId).executeTakeFirst();
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
