import { ALL_SCOPES, type RuntimeEndpoint, type RuntimeName } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { recordAudit } from "../audit/audit-log";
import { createApiKey } from "../auth/api-keys";
import type { UserPrincipal } from "../auth/principal";
import type { AppContext } from "../context";
import type { DevicePairingsTable, PairingPurpose, Schema } from "../db/schema";
import { ApiError, conflict } from "../http/errors";
import {
  type DeviceDescription,
  endEndpointStreams,
  parseRuntime,
  present,
  registerEndpointIn,
  storedDescription,
} from "./endpoints-service";
import { formatUserCode, hashPollToken, newPollToken, newUserCode, normalizeUserCode } from "./pairing-codes";

type PairingRow = Selectable<DevicePairingsTable>;

/** A pairing is open for this long after start; the bridge polls every {@link POLL_INTERVAL_S} s. */
export const PAIRING_LIFETIME_MS = 10 * 60_000;
export const POLL_INTERVAL_S = 2;
/** Finished and expired pairings are kept this long past expiry (for the poll's answer), then deleted. */
export const PAIRING_RETENTION_MS = 24 * 60 * 60_000;

export type PairingState = "pending" | "approved" | "denied" | "expired" | "consumed";

const pairingNotFound = () =>
  new ApiError(404, "pairing_not_found", "No open pairing has this code or token; it may have expired (pairings last 10 minutes)");

/** The stored status with time applied: a pairing not consumed by its expiry is expired. */
export function pairingState(row: PairingRow, nowMs: number): PairingState {
  if ((row.status === "pending" || row.status === "approved") && Date.parse(row.expires_at) <= nowMs) return "expired";
  return row.status;
}

export interface StartedPairing {
  userCode: string;
  pollToken: string;
  expiresAt: string;
}

/** Starts a pairing for a device that has no credential yet; nothing is trusted until the owner approves. */
export async function startPairing(
  context: AppContext,
  device: DeviceDescription,
  purpose: PairingPurpose = "bridge",
): Promise<StartedPairing> {
  const runtime = parseRuntime(device.runtime);
  const { clock } = context;
  const pollToken = newPollToken();
  const expiresAt = clock.isoIn(PAIRING_LIFETIME_MS);
  // A code still held by another pairing (until its cleanup) is drawn again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const userCode = newUserCode();
    const started = await context.db.transaction().execute(async (tx) => {
      const row = await tx
        .insertInto("device_pairings")
        .values({
          user_code: userCode,
          poll_token_hash: hashPollToken(pollToken),
          ...storedDescription(device, runtime),
          status: "pending",
          purpose,
          created_at: clock.iso(),
          expires_at: expiresAt,
        })
        .onConflict((oc) => oc.column("user_code").doNothing())
        .returning("id")
        .executeTakeFirst();
      if (!row) return false;
      await recordAudit(tx, clock, {
        actor: "system",
        action: "pairing.start",
        objectType: "device_pairing",
        objectId: row.id,
        parties: [],
        detail: { deviceId: device.deviceId, runtime, purpose },
      });
      return true;
    });
    if (started) return { userCode: formatUserCode(userCode), pollToken, expiresAt };
  }
  throw new ApiError(503, "pairing_unavailable", "Could not allocate a pairing code; try again");
}

/** What the approval page shows about a pairing; every text field came from an unauthenticated device. */
export interface PairingSummary {
  userCode: string;
  state: PairingState;
  purpose: PairingPurpose;
  deviceId: string;
  runtime: RuntimeName;
  label: string | null;
  bridgeVersion: string | null;
  expiresAt: string;
}

export async function findPairingByCode(context: AppContext, rawCode: string): Promise<PairingSummary | null> {
  const code = normalizeUserCode(rawCode);
  if (!code) return null;
  const row = await context.db.selectFrom("device_pairings").selectAll().where("user_code", "=", code).executeTakeFirst();
  if (!row) return null;
  return {
    userCode: formatUserCode(row.user_code),
    state: pairingState(row, context.clock.nowMs()),
    purpose: row.purpose,
    deviceId: row.device_id,
    runtime: row.runtime,
    label: row.label,
    bridgeVersion: row.bridge_version,
    expiresAt: row.expires_at,
  };
}

/**
 * The owner's answer. Only a pending, unexpired pairing can be decided, and only once: the
 * update is conditional on `pending`, so two answers racing cannot both win.
 */
export async function decidePairing(
  context: AppContext,
  principal: UserPrincipal,
  rawCode: string,
  action: "approve" | "deny",
): Promise<{ status: "approved" | "denied"; deviceId: string; runtime: RuntimeName; label: string | null }> {
  const code = normalizeUserCode(rawCode);
  if (!code) throw pairingNotFound();
  const { clock } = context;
  const status = action === "approve" ? "approved" : "denied";
  return context.db.transaction().execute(async (tx) => {
    const now = clock.iso();
    const row = await tx
      .updateTable("device_pairings")
      .set({ status, user_id: principal.userId, resolved_at: now })
      .where("user_code", "=", code)
      .where("status", "=", "pending")
      .where("expires_at", ">", now)
      .returningAll()
      .executeTakeFirst();
    if (!row) {
      const existing = await tx.selectFrom("device_pairings").selectAll().where("user_code", "=", code).executeTakeFirst();
      const state = existing && pairingState(existing, clock.nowMs());
      if (!existing || state === "expired") throw pairingNotFound();
      throw conflict("pairing_already_resolved", `This pairing is already ${state}`);
    }
    await recordAudit(tx, clock, {
      actor: principal,
      action: action === "approve" ? "pairing.approve" : "pairing.deny",
      objectType: "device_pairing",
      objectId: row.id,
      parties: [principal.userId],
      detail: { deviceId: row.device_id, runtime: row.runtime },
    });
    return { status, deviceId: row.device_id, runtime: row.runtime, label: row.label };
  });
}

export type PollAnswer =
  | { status: "pending" | "denied" | "expired" | "consumed" }
  | { status: "approved"; deviceToken: string; userId: number; endpointId: string; endpoint: RuntimeEndpoint }
  | { status: "approved"; apiKey: string; userId: number; username: string };

/**
 * Marks an approved pairing consumed. Conditional on `approved`, so of two concurrent polls
 * exactly one wins; the loser's transaction sees no row changed.
 */
async function consume(tx: Kysely<Schema>, id: number): Promise<boolean> {
  const consumed = await tx
    .updateTable("device_pairings")
    .set({ status: "consumed" })
    .where("id", "=", id)
    .where("status", "=", "approved")
    .executeTakeFirst();
  return consumed.numUpdatedRows > 0n;
}

/** A sign-in pairing's answer: an API key with every scope for the approving owner, labelled by the app. */
async function consumeSignIn(context: AppContext, row: PairingRow, ownerId: number): Promise<PollAnswer> {
  const { clock } = context;
  return context.db.transaction().execute(async (tx) => {
    if (!(await consume(tx, row.id))) return { status: "consumed" } as const;
    const owner = await tx.selectFrom("users").select("username").where("id", "=", ownerId).executeTakeFirstOrThrow();
    const key = await createApiKey(tx, {
      userId: ownerId,
      scopes: ALL_SCOPES,
      label: `app sign-in: ${row.label ?? row.device_id}`.slice(0, 200),
    });
    await recordAudit(tx, clock, {
      actor: "system",
      action: "pairing.consume",
      objectType: "device_pairing",
      objectId: row.id,
      parties: [ownerId],
      detail: { deviceId: row.device_id, purpose: "sign_in", keyId: key.keyId },
    });
    return { status: "approved", apiKey: key.apiKey, userId: ownerId, username: owner.username } as const;
  });
}

/**
 * The bridge's poll. The first read of an approved pairing registers the endpoint for the
 * approving owner (rotating an earlier registration of the device) and consumes the pairing in
 * the same transaction; the consuming update is conditional on `approved`, so of two concurrent
 * polls exactly one gets the token.
 */
export async function pollPairing(context: AppContext, pollToken: string): Promise<PollAnswer> {
  const { clock, db } = context;
  const row = await db.selectFrom("device_pairings").selectAll().where("poll_token_hash", "=", hashPollToken(pollToken)).executeTakeFirst();
  if (!row) throw pairingNotFound();
  const state = pairingState(row, clock.nowMs());
  if (state !== "approved") return { status: state };
  const ownerId = row.user_id as number;
  if (row.purpose === "sign_in") return consumeSignIn(context, row, ownerId);
  const registration = await db.transaction().execute(async (tx) => {
    if (!(await consume(tx, row.id))) return null;
    const device = {
      deviceId: row.device_id,
      runtime: row.runtime,
      bridgeVersion: row.bridge_version,
      adapterVersion: row.adapter_version,
      capabilities: JSON.parse(row.capabilities) as unknown,
      label: row.label,
    };
    const registered = await registerEndpointIn(tx, clock, "system", ownerId, device, "device_code");
    await tx.updateTable("device_pairings").set({ endpoint_id: registered.row.id }).where("id", "=", row.id).execute();
    await recordAudit(tx, clock, {
      actor: "system",
      action: "pairing.consume",
      objectType: "device_pairing",
      objectId: row.id,
      parties: [ownerId],
      detail: { deviceId: row.device_id, endpointId: registered.row.id },
    });
    return registered;
  });
  if (!registration) return { status: "consumed" };
  if (!registration.created) endEndpointStreams(context, registration.row.id);
  return {
    status: "approved",
    deviceToken: registration.deviceToken,
    userId: ownerId,
    endpointId: registration.row.id,
    endpoint: present(context, registration.row),
  };
}

/** Maintenance: pairings a day past expiry are of no further use to anyone. */
export async function deleteOldPairings(context: AppContext): Promise<number> {
  const result = await context.db
    .deleteFrom("device_pairings")
    .where("expires_at", "<", context.clock.isoIn(-PAIRING_RETENTION_MS))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
