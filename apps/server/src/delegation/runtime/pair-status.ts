import type { PAIR_STATUS_REASONS, RuntimeEndpoint } from "@tandem/core";
import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { findDefaultRoute } from "./default-route-service";
import { present } from "./endpoints-service";
import { isEndpointOnline } from "./presence";
import { findEndpointSession, inboundRefusal } from "./sessions-service";

export type PairStatusReason = (typeof PAIR_STATUS_REASONS)[number];

export type PairStatus =
  | { paired: true; endpoint: RuntimeEndpoint; sessionHandle: string }
  | { paired: false; reason: PairStatusReason; endpoint?: RuntimeEndpoint; sessionHandle?: string };

/**
 * Whether someone granting the owner access would reach a live runtime: the default route must
 * name an endpoint that is not revoked and is online, and a session that is open and accepts
 * inbound work. An offline default route does not count. Accepting a grant asks the same inside
 * its transaction (`db`), so the route it freezes is one this would answer paired.
 */
export async function pairStatus(context: AppContext, ownerId: number, db: Kysely<Schema> = context.db): Promise<PairStatus> {
  const route = await findDefaultRoute(db, ownerId);
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
  const refusal = inboundRefusal(await findEndpointSession(db, endpointRow.id, sessionHandle));
  if (refusal) return { paired: false, reason: refusal, endpoint, sessionHandle };
  return { paired: true, endpoint, sessionHandle };
}
