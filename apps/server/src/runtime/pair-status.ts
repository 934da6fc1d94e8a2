import type { PAIR_STATUS_REASONS, RuntimeEndpoint } from "@tandem/core";
import type { AppContext } from "../context";
import { present } from "./endpoints-service";
import { isEndpointOnline } from "./presence";

export interface PairStatus {
  paired: boolean;
  reason?: (typeof PAIR_STATUS_REASONS)[number];
  endpoint?: RuntimeEndpoint;
  sessionHandle?: string;
}

/**
 * Whether someone granting the owner access would reach a live runtime: the default route must
 * name an endpoint that is not revoked and is online, and a session that is open and accepts
 * inbound work. An offline default route does not count.
 */
export async function pairStatus(context: AppContext, ownerId: number): Promise<PairStatus> {
  const { db } = context;
  const route = await db.selectFrom("default_routes").selectAll().where("owner_id", "=", ownerId).executeTakeFirst();
  if (!route) return { paired: false, reason: "no_default_route" };
  const sessionHandle = route.session_handle;
  const endpointRow = await db
    .selectFrom("runtime_endpoints")
    .selectAll()
    .where("id", "=", route.endpoint_id)
    .where("owner_id", "=", ownerId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (!endpointRow) return { paired: false, reason: "endpoint_not_found", sessionHandle };
  const endpoint = present(context, endpointRow);
  if (!isEndpointOnline(endpointRow, context.clock.nowMs(), context.config.presenceTimeoutMs)) {
    return { paired: false, reason: "endpoint_offline", endpoint, sessionHandle };
  }
  const session = await db
    .selectFrom("runtime_sessions")
    .select(["state", "allow_inbound"])
    .where("handle", "=", sessionHandle)
    .where("endpoint_id", "=", endpointRow.id)
    .executeTakeFirst();
  if (!session) return { paired: false, reason: "session_not_found", endpoint, sessionHandle };
  if (session.state === "closed") return { paired: false, reason: "session_closed", endpoint, sessionHandle };
  if (session.allow_inbound !== 1) return { paired: false, reason: "inbound_disabled", endpoint, sessionHandle };
  return { paired: true, endpoint, sessionHandle };
}
