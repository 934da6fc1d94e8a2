import type { RuntimeEndpoint, RuntimeName, Scope } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { meterDevice } from "../../agent/usage/meters";
import { recordAudit } from "../../audit/audit-log";
import { createApiKey } from "../../auth/api-keys";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { DevicePairingsTable, PairingPurpose, Schema } from "../../db/schema";
import { ApiError, conflict } from "../../http/errors";
import { endGrantsFrozenTo, inWriteUnit, type WriteUnit } from "../grants";
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

/**
 * What a sign-in pairing's key may do: what the desktop app does (notes and todos over sync and
 * REST, snapshots, the owner's side of delegation: grants, tool approvals, its bridge; its managed
 * agents), and nothing admin-like. No `os.network` (giving anyone agent access, contacts, permissions), no
 * `os.memory`, no `os.heartbeat`. Raw memory's own scopes, yes: it is ciphertext, and no key of it can
 * be given to a new device without an enrolled one or the recovery code. An owner tricked into approving
 * a code gives away only this.
 */
export const SIGN_IN_SCOPES: readonly Scope[] = [
  "os.notes:read",
  "os.notes:write",
  "os.todos:read",
  "os.todos:write",
  "os.snapshots:read",
  "os.snapshots:write",
  "os.team:read",
  "os.team:write",
  "os.agents:read",
  "os.agents:write",
  // Raw memory is ciphertext only, and giving a device the key needs a signature only an enrolled
  // computer or the recovery code can make (docs/raw-memory.md): safe to hand to a signed-in app.
  "os.raw-memory:read",
  "os.raw-memory:write",
];

/** Where a pairing request came from, as the server saw it; shown to the owner who decides. */
export interface PairingOrigin {
  address: string | null;
  agent: string | null;
}

/** Starts a pairing for a device that has no credential yet; nothing is trusted until the owner approves. */
export async function startPairing(
  context: AppContext,
  device: DeviceDescription,
  purpose: PairingPurpose = "bridge",
  origin: PairingOrigin = { address: null, agent: null },
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
          requester_address: origin.address?.slice(0, 100) ?? null,
          requester_agent: origin.agent?.slice(0, 300) ?? null,
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
  /** The client address and User-Agent the request came from (null for pairings started before they were kept). */
  requesterAddress: string | null;
  requesterAgent: string | null;
  createdAt: string;
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
    requesterAddress: row.requester_address,
    requesterAgent: row.requester_agent,
    createdAt: row.created_at,
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

/** A sign-in pairing's answer: an API key with {@link SIGN_IN_SCOPES} for the approving owner, labelled by the app. */
async function consumeSignIn(context: AppContext, row: PairingRow, ownerId: number): Promise<PollAnswer> {
  const { clock } = context;
  return context.db.transaction().execute(async (tx) => {
    if (!(await consume(tx, row.id))) return { status: "consumed" } as const;
    const owner = await tx.selectFrom("users").select("username").where("id", "=", ownerId).executeTakeFirstOrThrow();
    const key = await createApiKey(tx, {
      userId: ownerId,
      scopes: SIGN_IN_SCOPES,
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
 * A pairing never takes over an endpoint: a device id the owner already has an endpoint for is
 * only a name the (unauthenticated) device chose, and another device could claim it. That
 * endpoint is retired inside the pairing's transaction: grants frozen to it are revoked (both
 * sides hear `grant.revoked`), its default route is cleared, and it is deleted with its sessions
 * and event log. Answers its id and last cursor, or null when there was none.
 */
async function retireDeviceEndpoint(
  context: AppContext,
  unit: WriteUnit,
  ownerId: number,
  deviceId: string,
): Promise<{ id: string; eventCursor: number } | null> {
  const { tx } = unit;
  const previous = await tx
    .selectFrom("runtime_endpoints")
    .select(["id", "event_cursor"])
    .where("owner_id", "=", ownerId)
    .where("device_id", "=", deviceId)
    .executeTakeFirst();
  if (!previous) return null;
  // Grants first: their locks come before endpoint rows (see `lockPair`).
  const grantsEnded = await endGrantsFrozenTo(context, unit, previous.id, "system");
  await tx.deleteFrom("default_routes").where("endpoint_id", "=", previous.id).execute();
  await tx.deleteFrom("runtime_endpoints").where("id", "=", previous.id).execute();
  await recordAudit(tx, context.clock, {
    actor: "system",
    action: "endpoint.replace",
    objectType: "runtime_endpoint",
    objectId: previous.id,
    parties: [ownerId],
    detail: { deviceId, grantsEnded },
  });
  return { id: previous.id, eventCursor: Number(previous.event_cursor) };
}

/**
 * The bridge's poll. The first read of an approved pairing registers a new endpoint for the
 * approving owner (retiring any earlier endpoint of the same device id, see
 * {@link retireDeviceEndpoint}) and consumes the pairing in the same transaction; the consuming
 * update is conditional on `approved`, so of two concurrent polls exactly one gets the token.
 */
export async function pollPairing(context: AppContext, pollToken: string): Promise<PollAnswer> {
  const { clock, db } = context;
  const row = await db.selectFrom("device_pairings").selectAll().where("poll_token_hash", "=", hashPollToken(pollToken)).executeTakeFirst();
  if (!row) throw pairingNotFound();
  const state = pairingState(row, clock.nowMs());
  if (state !== "approved") return { status: state };
  const ownerId = row.user_id as number;
  if (row.purpose === "sign_in") return consumeSignIn(context, row, ownerId);
  const outcome = await inWriteUnit(context, undefined, async (unit) => {
    const { tx } = unit;
    if (!(await consume(tx, row.id))) return null;
    const device = {
      deviceId: row.device_id,
      runtime: row.runtime,
      bridgeVersion: row.bridge_version,
      adapterVersion: row.adapter_version,
      capabilities: JSON.parse(row.capabilities) as unknown,
      label: row.label,
    };
    const retired = await retireDeviceEndpoint(context, unit, ownerId, row.device_id);
    // A device new this month past the account's device ceiling cannot register (402, says which).
    await meterDevice(context, unit, ownerId, row.device_id, true);
    const registered = await registerEndpointIn(tx, clock, "system", ownerId, device, "device_code");
    if (retired) {
      // Cursors keep increasing for the device, so a bridge resuming with its last cursor misses nothing new.
      await tx.updateTable("runtime_endpoints").set({ event_cursor: retired.eventCursor }).where("id", "=", registered.row.id).execute();
    }
    await tx.updateTable("device_pairings").set({ endpoint_id: registered.row.id }).where("id", "=", row.id).execute();
    await recordAudit(tx, clock, {
      actor: "system",
      action: "pairing.consume",
      objectType: "device_pairing",
      objectId: row.id,
      parties: [ownerId],
      detail: { deviceId: row.device_id, endpointId: registered.row.id, ...(retired ? { replacedEndpointId: retired.id } : {}) },
    });
    return { registered, retired };
  });
  if (!outcome) return { status: "consumed" };
  const { registered, retired } = outcome;
  if (retired) endEndpointStreams(context, retired.id);
  return {
    status: "approved",
    deviceToken: registered.deviceToken,
    userId: ownerId,
    endpointId: registered.row.id,
    endpoint: present(context, registered.row),
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
