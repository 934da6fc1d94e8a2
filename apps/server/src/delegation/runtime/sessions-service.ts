import type { RuntimeSession } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { DevicePrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { RuntimeSessionsTable, Schema, SessionState } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { newId } from "../../ids";
import { endpointNotFound, lockLiveEndpoint } from "./endpoints-service";

export type SessionRow = Selectable<RuntimeSessionsTable>;

export const sessionNotFound = (handle: string) => new ApiError(404, "session_not_found", `session ${handle} not found`);

export function sessionView(row: SessionRow): RuntimeSession {
  return {
    sessionHandle: row.handle,
    endpointId: row.endpoint_id,
    label: row.label,
    state: row.state,
    deliveryMode: "managed_stream",
    capabilities: JSON.parse(row.capabilities) as unknown,
    allowInbound: row.allow_inbound === 1,
    allowMidTurnSteer: row.allow_mid_turn_steer === 1,
    workspaceBoundary: row.workspace_boundary,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface SessionRegistration {
  endpointId?: string;
  handle?: string;
  label?: string | null;
  state: "idle" | "busy";
  capabilities?: unknown;
  allowInbound: boolean;
  allowMidTurnSteer: boolean;
  workspaceBoundary?: string | null;
}

export interface SessionChange {
  state?: SessionState;
  allowInbound?: boolean;
  allowMidTurnSteer?: boolean;
  label?: string | null;
  capabilities?: unknown;
}

const flag = (value: boolean) => (value ? 1 : 0);

/**
 * Registers a session of the token's own endpoint. The handle is opaque (the bridge's own, or
 * one made here); the provider's session id never reaches the server. Handles are per endpoint:
 * another endpoint's sessions, whoever owns them, neither block a handle nor reveal that it is in
 * use there. Posting a handle the endpoint already has updates that session, so a bridge can
 * re-announce its sessions safely.
 */
export async function registerSession(
  context: AppContext,
  principal: DevicePrincipal,
  input: SessionRegistration,
): Promise<{ session: RuntimeSession; created: boolean }> {
  const endpointId = principal.credential.id;
  if (input.endpointId !== undefined && input.endpointId !== endpointId) throw endpointNotFound(input.endpointId);
  const { clock } = context;
  return context.db.transaction().execute(async (tx) => {
    if (!(await lockLiveEndpoint(tx, endpointId))) throw endpointNotFound(endpointId);
    const now = clock.iso();
    const handle = input.handle ?? newId("sess");
    const values = {
      label: input.label ?? null,
      state: input.state,
      delivery_mode: "managed_stream",
      capabilities: JSON.stringify(input.capabilities ?? []),
      allow_inbound: flag(input.allowInbound),
      allow_mid_turn_steer: flag(input.allowMidTurnSteer),
      workspace_boundary: input.workspaceBoundary ?? null,
      updated_at: now,
    };
    const inserted = await tx
      .insertInto("runtime_sessions")
      .values({ handle, endpoint_id: endpointId, owner_id: principal.userId, created_at: now, ...values })
      .onConflict((oc) => oc.columns(["endpoint_id", "handle"]).doNothing())
      .returningAll()
      .executeTakeFirst();
    const row =
      inserted ??
      (await tx
        .updateTable("runtime_sessions")
        .set(values)
        .where("handle", "=", handle)
        .where("endpoint_id", "=", endpointId)
        .returningAll()
        .executeTakeFirstOrThrow());
    await recordAudit(tx, clock, {
      actor: principal,
      action: inserted ? "session.register" : "session.update",
      objectType: "runtime_session",
      objectId: handle,
      parties: [principal.userId],
      detail: { endpointId, state: row.state, allowInbound: input.allowInbound },
    });
    return { session: sessionView(row), created: inserted !== undefined };
  });
}

/** Syncs the bridge's view of one of its sessions; another endpoint's handle is a 404. */
export async function updateSession(
  context: AppContext,
  principal: DevicePrincipal,
  handle: string,
  change: SessionChange,
): Promise<RuntimeSession> {
  const { clock } = context;
  return context.db.transaction().execute(async (tx) => {
    if (!(await lockLiveEndpoint(tx, principal.credential.id))) throw sessionNotFound(handle);
    const set: Partial<SessionRow> = { updated_at: clock.iso() };
    if (change.state !== undefined) set.state = change.state;
    if (change.allowInbound !== undefined) set.allow_inbound = flag(change.allowInbound);
    if (change.allowMidTurnSteer !== undefined) set.allow_mid_turn_steer = flag(change.allowMidTurnSteer);
    if (change.label !== undefined) set.label = change.label;
    if (change.capabilities !== undefined) set.capabilities = JSON.stringify(change.capabilities);
    const row = await tx
      .updateTable("runtime_sessions")
      .set(set)
      .where("handle", "=", handle)
      .where("endpoint_id", "=", principal.credential.id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw sessionNotFound(handle);
    await recordAudit(tx, clock, {
      actor: principal,
      action: "session.update",
      objectType: "runtime_session",
      objectId: handle,
      parties: [principal.userId],
      detail: { endpointId: row.endpoint_id, state: change.state, allowInbound: change.allowInbound },
    });
    return sessionView(row);
  });
}

/** A session of one endpoint; another endpoint's handle is not found. */
export async function findEndpointSession(db: Kysely<Schema>, endpointId: string, handle: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom("runtime_sessions")
    .selectAll()
    .where("handle", "=", handle)
    .where("endpoint_id", "=", endpointId)
    .executeTakeFirst();
}

export type InboundRefusal = "session_not_found" | "session_closed" | "inbound_disabled";

/**
 * Why a session cannot take inbound work now, in the reasons bridges know (pair status, injection
 * validation); null when it can: it exists, is open and allows inbound.
 */
export function inboundRefusal(session: Pick<SessionRow, "state" | "allow_inbound"> | undefined): InboundRefusal | null {
  if (!session) return "session_not_found";
  if (session.state === "closed") return "session_closed";
  if (session.allow_inbound !== 1) return "inbound_disabled";
  return null;
}
