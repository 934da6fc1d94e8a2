import { RUNTIMES, type RuntimeEndpoint, type RuntimeName } from "@tandem/core";
import type { Kysely } from "kysely";
import { meterDevice, meterDeviceNow } from "../../agent/usage/meters";
import { type AuditActor, recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import type { Clock } from "../../clock";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError, badRequest, forbidden } from "../../http/errors";
import { newId } from "../../ids";
import { announceAccessChange } from "../../shared/access-changes";
import { inWriteUnit } from "../grants/write-unit";
import { issueDeviceToken } from "./device-tokens";
import { type EndpointRow, endpointView } from "./endpoint-view";

/** What a bridge says about itself, at registration and at the start of a pairing. */
export interface DeviceDescription {
  deviceId: string;
  runtime: string;
  bridgeVersion?: string | null;
  adapterVersion?: string | null;
  capabilities?: unknown;
  label?: string | null;
}

export const endpointNotFound = (endpointId: string) => new ApiError(404, "endpoint_not_found", `runtime endpoint ${endpointId} not found`);

/** Only the runtimes bridges drive; anything else is refused with a code a bridge can show. */
export function parseRuntime(runtime: string): RuntimeName {
  if ((RUNTIMES as readonly string[]).includes(runtime)) return runtime as RuntimeName;
  throw badRequest("invalid_runtime", `runtime must be "claude-code" or "codex", not ${JSON.stringify(runtime.slice(0, 100))}`);
}

/** A device's description as endpoints and pairings store it: omitted fields null, capabilities `[]`. */
export function storedDescription(device: DeviceDescription, runtime: RuntimeName) {
  return {
    device_id: device.deviceId,
    runtime,
    bridge_version: device.bridgeVersion ?? null,
    adapter_version: device.adapterVersion ?? null,
    capabilities: JSON.stringify(device.capabilities ?? []),
    label: device.label ?? null,
  };
}

export interface Registration {
  row: EndpointRow;
  /** The new device token: answered once, never stored. */
  deviceToken: string;
  /** False when an endpoint of the same device was re-registered and its token rotated. */
  created: boolean;
}

/**
 * Registers (owner, deviceId) inside `tx`: a new endpoint, or, for a device already known, the
 * same endpoint (bridges keep their cursor) with a fresh token, un-revoked. The previous token
 * stops verifying with this commit because the row keeps only the current token's hash.
 * Registration counts as a heartbeat. Shared by `POST /local-agent/endpoints` and pairing.
 */
export async function registerEndpointIn(
  tx: Kysely<Schema>,
  clock: Clock,
  actor: AuditActor,
  ownerId: number,
  device: DeviceDescription,
  via: "api_key" | "device_code" | "device_token",
): Promise<Registration> {
  const runtime = parseRuntime(device.runtime);
  const token = issueDeviceToken();
  const now = clock.iso();
  const inserted = await tx
    .insertInto("runtime_endpoints")
    .values({
      id: newId("ep"),
      owner_id: ownerId,
      ...storedDescription(device, runtime),
      token_id: token.id,
      token_hash: token.secretHash,
      created_at: now,
      updated_at: now,
      last_seen_at: now,
    })
    // A concurrent registration of the same device makes this one a rotation, not an error.
    .onConflict((oc) => oc.columns(["owner_id", "device_id"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) {
    await recordAudit(tx, clock, {
      actor,
      action: "endpoint.register",
      objectType: "runtime_endpoint",
      objectId: inserted.id,
      parties: [ownerId],
      detail: { deviceId: device.deviceId, runtime, via },
    });
    return { row: inserted, deviceToken: token.token, created: true };
  }
  const previous = await tx
    .selectFrom("runtime_endpoints")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .where("device_id", "=", device.deviceId)
    .executeTakeFirstOrThrow();
  // Omitted optional fields keep what the device said before; an explicit null clears them.
  const row = await tx
    .updateTable("runtime_endpoints")
    .set({
      runtime,
      bridge_version: device.bridgeVersion === undefined ? previous.bridge_version : device.bridgeVersion,
      adapter_version: device.adapterVersion === undefined ? previous.adapter_version : device.adapterVersion,
      capabilities: device.capabilities === undefined ? previous.capabilities : JSON.stringify(device.capabilities),
      label: device.label === undefined ? previous.label : device.label,
      token_id: token.id,
      token_hash: token.secretHash,
      updated_at: now,
      last_seen_at: now,
      revoked_at: null,
    })
    .where("id", "=", previous.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordAudit(tx, clock, {
    actor,
    action: "endpoint.rotate",
    objectType: "runtime_endpoint",
    objectId: row.id,
    parties: [ownerId],
    detail: { deviceId: device.deviceId, runtime, via, wasRevoked: previous.revoked_at !== null },
  });
  return { row, deviceToken: token.token, created: false };
}

/** Streams opened with a token that no longer verifies must not keep running, on any instance. */
export function endEndpointStreams(context: AppContext, endpointId: string): void {
  context.realtime.endStreams(endpointId);
  // Device tokens open no sync connections: only the streams need to end.
  announceAccessChange(context.shared, { endStreams: [endpointId], sync: false });
}

/**
 * A user key registers any device of its owner. A device token (a bridge signed in by device code
 * holds nothing else) re-registers its own device on every start, rotating its own token; it can
 * never register another device, nor bring back a revoked one (a revoked token does not verify).
 */
export async function registerEndpoint(
  context: AppContext,
  principal: Principal,
  device: DeviceDescription,
): Promise<{ endpoint: RuntimeEndpoint; deviceToken: string; created: boolean }> {
  const { credential } = principal;
  if (credential.kind === "device" && credential.deviceId !== device.deviceId) {
    throw forbidden("device_mismatch", `A device token re-registers only its own device (${credential.deviceId})`);
  }
  const via = credential.kind === "device" ? "device_token" : "api_key";
  const registration = await inWriteUnit(context, undefined, async (unit) => {
    // A device new this month past the account's device ceiling cannot register (402, says which).
    await meterDevice(context, unit, principal.userId, device.deviceId, true);
    return registerEndpointIn(unit.tx, context.clock, principal, principal.userId, device, via);
  });
  if (!registration.created) endEndpointStreams(context, registration.row.id);
  return { ...registration, endpoint: present(context, registration.row) };
}

export function present(context: AppContext, row: EndpointRow): RuntimeEndpoint {
  return endpointView(row, context.clock.nowMs(), context.config.presenceTimeoutMs);
}

export async function listEndpoints(context: AppContext, ownerId: number): Promise<RuntimeEndpoint[]> {
  const rows = await context.db
    .selectFrom("runtime_endpoints")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .where("revoked_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map((row) => present(context, row));
}

/**
 * The endpoint a credential may act on: a device token only its own endpoint, a user key any
 * endpoint of its owner. Anything else is the same 404 as an unknown id.
 */
export async function endpointFor(db: Kysely<Schema>, principal: Principal, endpointId: string): Promise<EndpointRow> {
  if (principal.credential.kind === "device" && principal.credential.id !== endpointId) throw endpointNotFound(endpointId);
  const row = await db
    .selectFrom("runtime_endpoints")
    .selectAll()
    .where("id", "=", endpointId)
    .where("owner_id", "=", principal.userId)
    .executeTakeFirst();
  if (!row) throw endpointNotFound(endpointId);
  return row;
}

/**
 * Locks a live endpoint's row until the transaction ends (`select … for update`). A revocation
 * updates the same row, so it either committed first (this answers false) or waits and then undoes
 * what this transaction adds (closes the session, clears the route): nothing can attach to an
 * endpoint in the middle of its revocation.
 */
export async function lockLiveEndpoint(tx: Kysely<Schema>, endpointId: string): Promise<boolean> {
  const row = await tx
    .selectFrom("runtime_endpoints")
    .select("id")
    .where("id", "=", endpointId)
    .where("revoked_at", "is", null)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export async function heartbeat(context: AppContext, principal: Principal, endpointId: string): Promise<{ lastSeenAt: string }> {
  if (principal.credential.kind !== "device" || principal.credential.id !== endpointId) throw endpointNotFound(endpointId);
  const lastSeenAt = context.clock.iso();
  const result = await context.db
    .updateTable("runtime_endpoints")
    .set({ last_seen_at: lastSeenAt })
    .where("id", "=", endpointId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw endpointNotFound(endpointId);
  // A heartbeat makes the device active this month (counted once a month).
  await meterDeviceNow(context, principal.userId, principal.credential.deviceId);
  return { lastSeenAt };
}

/**
 * Revokes at once: the token stops verifying, the endpoint leaves routing (its sessions close and
 * a default route pointing at it is cleared) and its open streams end. Revoking a revoked
 * endpoint again answers the original revocation time and changes nothing.
 */
export async function revokeEndpoint(context: AppContext, principal: Principal, endpointId: string): Promise<{ revokedAt: string }> {
  const { clock } = context;
  const revokedAt = await context.db.transaction().execute(async (tx) => {
    const row = await endpointFor(tx, principal, endpointId);
    if (row.revoked_at !== null) return row.revoked_at;
    const now = clock.iso();
    const updated = await tx
      .updateTable("runtime_endpoints")
      .set({ revoked_at: now, updated_at: now })
      .where("id", "=", endpointId)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    // A concurrent revocation won; its time is the answer.
    if (updated.numUpdatedRows === 0n) return (await endpointFor(tx, principal, endpointId)).revoked_at ?? now;
    const route = await tx.deleteFrom("default_routes").where("endpoint_id", "=", endpointId).executeTakeFirst();
    const sessions = await tx
      .updateTable("runtime_sessions")
      .set({ state: "closed", updated_at: now })
      .where("endpoint_id", "=", endpointId)
      .where("state", "!=", "closed")
      .executeTakeFirst();
    await recordAudit(tx, clock, {
      actor: principal,
      action: "endpoint.revoke",
      objectType: "runtime_endpoint",
      objectId: endpointId,
      parties: [row.owner_id],
      detail: {
        deviceId: row.device_id,
        defaultRouteCleared: route.numDeletedRows > 0n,
        sessionsClosed: Number(sessions.numUpdatedRows),
      },
    });
    return now;
  });
  endEndpointStreams(context, endpointId);
  return { revokedAt };
}
