import type { Kysely, Selectable } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { DefaultRoutesTable, Schema } from "../../db/schema";
import { ApiError, conflict } from "../../http/errors";
import { endpointFor, endpointNotFound, lockLiveEndpoint } from "./endpoints-service";
import { findEndpointSession, sessionNotFound } from "./sessions-service";

export interface DefaultRoute {
  endpointId: string;
  sessionHandle: string;
  updatedAt: string;
}

export const noDefaultRoute = () =>
  new ApiError(404, "no_default_route", "No default route is set; a bridge sets one with PUT /local-agent/default-route");

/**
 * Points the owner's inbound grants at one session. A device token may only name its own
 * endpoint; a user key any of its owner's. The endpoint must not be revoked and the session must
 * be open and belong to that endpoint. Grants freeze the route when accepted, so a later change
 * never redirects them.
 */
export async function setDefaultRoute(
  context: AppContext,
  principal: Principal,
  endpointId: string,
  sessionHandle: string,
): Promise<DefaultRoute> {
  const { clock } = context;
  return context.db.transaction().execute(async (tx) => {
    await endpointFor(tx, principal, endpointId);
    if (!(await lockLiveEndpoint(tx, endpointId))) throw endpointNotFound(endpointId);
    const session = await findEndpointSession(tx, endpointId, sessionHandle);
    if (!session) throw sessionNotFound(sessionHandle);
    if (session.state === "closed") throw conflict("session_closed", `session ${sessionHandle} is closed; register an open session first`);
    const updatedAt = clock.iso();
    const values = { endpoint_id: endpointId, session_handle: sessionHandle, updated_at: updatedAt };
    await tx
      .insertInto("default_routes")
      .values({ owner_id: principal.userId, ...values })
      .onConflict((oc) => oc.column("owner_id").doUpdateSet(values))
      .execute();
    await recordAudit(tx, clock, {
      actor: principal,
      action: "default_route.set",
      objectType: "default_route",
      objectId: principal.userId,
      parties: [principal.userId],
      detail: { endpointId, sessionHandle },
    });
    return { endpointId, sessionHandle, updatedAt };
  });
}

/** The owner's default route as stored (at most one per owner). */
export async function findDefaultRoute(db: Kysely<Schema>, ownerId: number): Promise<Selectable<DefaultRoutesTable> | undefined> {
  return db.selectFrom("default_routes").selectAll().where("owner_id", "=", ownerId).executeTakeFirst();
}

export async function getDefaultRoute(context: AppContext, ownerId: number): Promise<DefaultRoute | undefined> {
  const row = await findDefaultRoute(context.db, ownerId);
  return row && { endpointId: row.endpoint_id, sessionHandle: row.session_handle, updatedAt: row.updated_at };
}

/**
 * Clears the owner's default route. A device only clears a route that points at its own
 * endpoint: one bridge shutting down must not unpair another. Answers whether a route went.
 */
export async function clearDefaultRoute(context: AppContext, principal: Principal): Promise<boolean> {
  const { clock } = context;
  return context.db.transaction().execute(async (tx) => {
    let query = tx.deleteFrom("default_routes").where("owner_id", "=", principal.userId);
    if (principal.credential.kind === "device") query = query.where("endpoint_id", "=", principal.credential.id);
    const deleted = await query.returning(["endpoint_id", "session_handle"]).executeTakeFirst();
    if (!deleted) return false;
    await recordAudit(tx, clock, {
      actor: principal,
      action: "default_route.clear",
      objectType: "default_route",
      objectId: principal.userId,
      parties: [principal.userId],
      detail: { endpointId: deleted.endpoint_id, sessionHandle: deleted.session_handle },
    });
    return true;
  });
}
