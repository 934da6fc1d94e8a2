import { GRANT_REQUEST_TTL_MINUTES, type GrantRow, MAX_GRANT_TTL_MINUTES, type RequestGrantBody } from "@tandem/core";
import type { Kysely } from "kysely";
import { type AuditActor, recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { GrantStatus, Schema } from "../../db/schema";
import { ApiError, badRequest, conflict, forbidden } from "../../http/errors";
import { newId } from "../../ids";
import { lockPair } from "../../people/network/pair-lock";
import { hasAgentPermission, requireAgentPermission } from "../../people/network/permissions";
import { parsePrincipalId } from "../runtime/resolve-person";
import { finishGrant } from "./grant-ending";
import { notifyRecipient, notifyRequester } from "./grant-events";
import { expireDueGrants, settleGrant } from "./grant-expiry";
import { type GrantRecord, grantNotFound, lockGrant, requireGrantParty, toGrantRow } from "./grant-rows";
import { currentGrantStatus } from "./grant-status";
import { type RuntimeRoute, resolveInboundRoute, resolveReplyRoute } from "./routes-of-parties";
import { inWriteUnit, type WriteUnit } from "./write-unit";

/** The only target kind bridges use: the person's default route, resolved when they accept. */
export const PERSON_DEFAULT_RUNTIME = "person_default_runtime";

const MINUTE = 60_000;

/** A grant's lifetime: what was asked for, 30 minutes when nothing was, and never more. */
export function grantTtlMinutes(requested: number | undefined): number {
  return Math.min(requested ?? MAX_GRANT_TTL_MINUTES, MAX_GRANT_TTL_MINUTES);
}

/** The time now and `minutes` later, from one reading of the clock, so the gap is exact. */
function nowAndLater(context: AppContext, minutes: number): [string, string] {
  const nowMs = context.clock.nowMs();
  return [new Date(nowMs).toISOString(), new Date(nowMs + minutes * MINUTE).toISOString()];
}

function deviceIdOf(principal: Principal): string | null {
  return principal.credential.kind === "device" ? principal.credential.deviceId : null;
}

/**
 * The person a grant targets. An unknown id is 404; a known person who has not given the
 * requester agent access is 403, connected or not, as agent RPC answers (v1 interface, Errors).
 */
async function resolveTarget(context: AppContext, requesterId: number, principalId: string): Promise<number> {
  const targetId = parsePrincipalId(principalId);
  if (targetId === requesterId) throw badRequest("cannot_grant_self", "A grant cannot target its own requester");
  const user =
    targetId === null ? undefined : await context.db.selectFrom("users").select("id").where("id", "=", targetId).executeTakeFirst();
  if (!user) throw new ApiError(404, "person_not_found", `No person with principal id ${principalId}`);
  await requireAgentPermission(context.db, user.id, requesterId);
  return user.id;
}

interface NewGrant {
  requesterId: number;
  requesterDeviceId: string | null;
  replyRoute: RuntimeRoute | null;
  recipientId: number;
  ttlMinutes: number | undefined;
  targetOfferId: string | null;
  /** How long the request waits for an answer. */
  requestTtlMinutes: number;
}

/** Stores a new pending grant (no route frozen yet). */
async function insertPendingGrant(context: AppContext, tx: Kysely<Schema>, grant: NewGrant): Promise<GrantRecord> {
  const [now, requestExpiresAt] = nowAndLater(context, grant.requestTtlMinutes);
  return tx
    .insertInto("grants")
    .values({
      id: newId("cs"),
      requester_id: grant.requesterId,
      requester_device_id: grant.requesterDeviceId,
      requester_reply_endpoint_id: grant.replyRoute?.endpointId ?? null,
      requester_reply_session_handle: grant.replyRoute?.sessionHandle ?? null,
      recipient_id: grant.recipientId,
      target_kind: PERSON_DEFAULT_RUNTIME,
      target_offer_id: grant.targetOfferId,
      frozen_endpoint_id: null,
      frozen_session_handle: null,
      status: "pending",
      requested_ttl_minutes: grantTtlMinutes(grant.ttlMinutes),
      requested_at: now,
      request_expires_at: requestExpiresAt,
      activated_at: null,
      grant_expires_at: null,
      revoked_at: null,
      ended_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Asks `target` for a grant; needs the agent permission from target to requester. Answers the pending row. */
export async function requestGrant(context: AppContext, principal: Principal, body: RequestGrantBody): Promise<GrantRow> {
  if (body.target.kind !== PERSON_DEFAULT_RUNTIME) {
    throw badRequest("unsupported_target_kind", `target.kind must be ${PERSON_DEFAULT_RUNTIME}, not "${body.target.kind}"`);
  }
  const requesterId = principal.userId;
  const recipientId = await resolveTarget(context, requesterId, body.target.principalId);
  return inWriteUnit(context, undefined, async ({ tx, events }) => {
    // Again under the pair lock: a request racing a withdrawal must not stay pending after it.
    if (!(await permittedUnderLock(context, tx, { requesterId, recipientId }))) {
      throw forbidden("agent_permission_required", "This person no longer gives you agent access");
    }
    const grant = await insertPendingGrant(context, tx, {
      requesterId,
      requesterDeviceId: deviceIdOf(principal),
      replyRoute: await resolveReplyRoute(tx, requesterId, body),
      recipientId,
      ttlMinutes: body.requestedTtlMinutes,
      targetOfferId: null,
      requestTtlMinutes: GRANT_REQUEST_TTL_MINUTES,
    });
    const row = toGrantRow(grant);
    await events.appendToUser(tx, recipientId, "grant.request", row);
    await recordAudit(tx, context.clock, {
      actor: principal,
      action: "grant.request",
      objectType: "grant",
      objectId: grant.id,
      parties: [requesterId, recipientId],
      detail: { ttlMinutes: grant.requested_ttl_minutes },
    });
    return row;
  });
}

/**
 * Makes a locked grant active on the recipient's default route as it is now, frozen: later route
 * changes never redirect it. Expiry: its ttl (at most 30 minutes) from now.
 */
async function activate(context: AppContext, unit: WriteUnit, grant: GrantRecord, actor: AuditActor, action: string): Promise<GrantRecord> {
  const { tx, events } = unit;
  const route = await resolveInboundRoute(context, tx, grant.recipient_id);
  const [activatedAt, grantExpiresAt] = nowAndLater(context, grantTtlMinutes(grant.requested_ttl_minutes));
  const active = await tx
    .updateTable("grants")
    .set({
      status: "active",
      frozen_endpoint_id: route.endpointId,
      frozen_session_handle: route.sessionHandle,
      activated_at: activatedAt,
      grant_expires_at: grantExpiresAt,
    })
    .where("id", "=", grant.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const activated = {
    communicationSessionId: active.id,
    endpointId: route.endpointId,
    sessionHandle: route.sessionHandle,
    activatedAt: active.activated_at,
    grantExpiresAt: active.grant_expires_at,
  };
  await notifyRecipient(tx, events, active, "grant.activated", activated);
  await notifyRequester(tx, events, active, "grant.activated", activated);
  await recordAudit(tx, context.clock, {
    actor,
    action,
    objectType: "grant",
    objectId: grant.id,
    parties: [grant.requester_id, grant.recipient_id],
    detail: { endpointId: route.endpointId, sessionHandle: route.sessionHandle, grantExpiresAt: active.grant_expires_at },
  });
  return active;
}

/** A pending grant's status check, under the lock: expired requests and answered ones are refused. */
function requirePending(grant: GrantRecord, nowIso: string): void {
  const status = currentGrantStatus(grant, nowIso);
  if (status === "expired") throw conflict("grant_expired", "The grant request has expired");
  if (status !== "pending") throw conflict("grant_not_pending", `The grant is ${status}, not pending`);
}

/** The recipient's grant, settled (a passed expiry is recorded first, and committed). */
async function recipientGrant(context: AppContext, principal: Principal, id: string): Promise<GrantRecord> {
  const grant = await requireGrantParty(context.db, id, principal.userId);
  if (grant.recipient_id !== principal.userId) throw grantNotFound(id);
  return settleGrant(context, grant);
}

/**
 * Inside a transaction that opens or activates a grant from `requesterId` to `recipientId`: takes
 * the pair lock a withdrawal of the permission takes too, then reads the permission. A request
 * racing the withdrawal therefore either commits first (and the withdrawal ends its grant) or
 * sees the permission gone. Take it before locking the grant (see `lockPair` for the order).
 */
export async function permittedUnderLock(
  context: AppContext,
  tx: Kysely<Schema>,
  parties: { requesterId: number; recipientId: number },
): Promise<boolean> {
  await lockPair(tx, context.database.dialect, parties.requesterId, parties.recipientId);
  return hasAgentPermission(tx, parties.recipientId, parties.requesterId);
}

/** The recipient accepts: the grant becomes active on their default route, frozen. */
export async function acceptGrant(context: AppContext, principal: Principal, id: string): Promise<GrantRow> {
  const found = await recipientGrant(context, principal, id);
  return inWriteUnit(context, undefined, async (unit) => {
    const permitted = await permittedUnderLock(context, unit.tx, { requesterId: found.requester_id, recipientId: found.recipient_id });
    const grant = (await lockGrant(unit.tx, id)) as GrantRecord;
    requirePending(grant, context.clock.iso());
    if (!permitted) {
      throw forbidden("agent_permission_required", "You no longer give this person agent access; the request cannot be accepted");
    }
    return toGrantRow(await activate(context, unit, grant, principal, "grant.accept"));
  });
}

export async function declineGrant(context: AppContext, principal: Principal, id: string): Promise<GrantRow> {
  await recipientGrant(context, principal, id);
  return inWriteUnit(context, undefined, async (unit) => {
    const grant = (await lockGrant(unit.tx, id)) as GrantRecord;
    requirePending(grant, context.clock.iso());
    return toGrantRow(await finishGrant(context, unit, grant, "declined", principal));
  });
}

const REVOCABLE: readonly GrantStatus[] = ["pending", "active"];

/**
 * Either party ends a pending or active grant; its open deliveries are revoked in the same
 * commit, so nothing more of it can be injected. Revoking again answers the revoked row.
 */
export async function revokeGrant(context: AppContext, principal: Principal, id: string): Promise<GrantRow> {
  const settled = await settleGrant(context, await requireGrantParty(context.db, id, principal.userId));
  return inWriteUnit(context, undefined, async (unit) => {
    const grant = (await lockGrant(unit.tx, id)) ?? settled;
    if (grant.status === "revoked") return toGrantRow(grant);
    const status = currentGrantStatus(grant, context.clock.iso());
    if (!REVOCABLE.includes(status)) throw conflict("grant_ended", `The grant is already ${status}`);
    return toGrantRow(await finishGrant(context, unit, grant, "revoked", principal));
  });
}

/**
 * Revokes every pending or active grant from `requesterId` to `recipientId`: what follows when
 * the recipient withdraws the agent permission those grants rest on. Answers the ids revoked.
 */
export async function endGrantsBetween(
  context: AppContext,
  parties: { requesterId: number; recipientId: number },
  actor: AuditActor,
  unit?: WriteUnit,
): Promise<string[]> {
  return inWriteUnit(context, unit, async (u) => {
    const open = await u.tx
      .selectFrom("grants")
      .select("id")
      .where("requester_id", "=", parties.requesterId)
      .where("recipient_id", "=", parties.recipientId)
      .where("status", "in", REVOCABLE)
      .execute();
    const revoked: string[] = [];
    for (const { id } of open) {
      const grant = await lockGrant(u.tx, id);
      if (!grant || !REVOCABLE.includes(grant.status)) continue;
      await finishGrant(context, u, grant, "revoked", actor);
      revoked.push(id);
    }
    return revoked;
  });
}

/**
 * Revokes every active grant frozen to `endpointId`: what follows when that endpoint is replaced
 * by a new pairing of its device id, so nothing it was given passes to the newcomer. Answers the
 * ids revoked.
 */
export async function endGrantsFrozenTo(context: AppContext, unit: WriteUnit, endpointId: string, actor: AuditActor): Promise<string[]> {
  const frozen = await unit.tx
    .selectFrom("grants")
    .select("id")
    .where("frozen_endpoint_id", "=", endpointId)
    .where("status", "=", "active")
    .orderBy("id")
    .execute();
  const revoked: string[] = [];
  for (const { id } of frozen) {
    const grant = await lockGrant(unit.tx, id);
    if (grant?.status !== "active") continue;
    await finishGrant(context, unit, grant, "revoked", actor);
    revoked.push(id);
  }
  return revoked;
}

export interface OpenActiveGrantInput {
  requesterId: number;
  recipientId: number;
  /** The requester's device, when a bridge asked. */
  requesterDeviceId?: string | null;
  /** Where replies go; default: the requester's default route. */
  replyEndpointId?: string;
  replySessionHandle?: string;
  /** Capped at 30; default 30. */
  ttlMinutes?: number;
  /** What the grant came from (for example a collaboration id); shown as `targetOfferId`. */
  targetOfferId?: string | null;
}

/**
 * Opens a grant that is active at once, for a delegation its recipient's owner has already
 * allowed: the same route freezing and expiry as an accept (409 `no_default_route`,
 * `default_route_offline`, `default_route_unavailable` when the route cannot take it). The
 * caller is responsible for that consent; the agent permission is checked here, under the pair
 * lock, as an accept checks it (403 `agent_permission_required`). Pass `unit` to commit together
 * with the caller's own change (then publish its events).
 */
export async function openActiveGrant(
  context: AppContext,
  actor: AuditActor,
  input: OpenActiveGrantInput,
  unit?: WriteUnit,
): Promise<GrantRow> {
  if (input.requesterId === input.recipientId) throw badRequest("cannot_grant_self", "A grant cannot target its own requester");
  return inWriteUnit(context, unit, async (u) => {
    if (!(await permittedUnderLock(context, u.tx, input))) {
      throw forbidden("agent_permission_required", "This person no longer gives you agent access");
    }
    const pending = await insertPendingGrant(context, u.tx, {
      requesterId: input.requesterId,
      requesterDeviceId: input.requesterDeviceId ?? null,
      replyRoute: await resolveReplyRoute(u.tx, input.requesterId, input),
      recipientId: input.recipientId,
      ttlMinutes: input.ttlMinutes,
      targetOfferId: input.targetOfferId ?? null,
      // Activated in the same transaction: it is never seen pending.
      requestTtlMinutes: 0,
    });
    return toGrantRow(await activate(context, u, pending, actor, "grant.open"));
  });
}

/** Every grant the caller is party to, newest first (passed expiries recorded first). */
export async function listGrants(context: AppContext, userId: number): Promise<GrantRow[]> {
  await expireDueGrants(context, userId);
  const grants = await context.db
    .selectFrom("grants")
    .selectAll()
    .where((eb) => eb.or([eb("requester_id", "=", userId), eb("recipient_id", "=", userId)]))
    .orderBy("requested_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return grants.map(toGrantRow);
}

export async function getGrant(context: AppContext, userId: number, id: string): Promise<GrantRow> {
  return toGrantRow(await settleGrant(context, await requireGrantParty(context.db, id, userId)));
}
