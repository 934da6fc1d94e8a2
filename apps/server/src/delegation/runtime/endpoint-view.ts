import type { RuntimeEndpoint } from "@tandem/core";
import type { Selectable } from "kysely";
import type { RuntimeEndpointsTable } from "../../db/schema";
import { isEndpointOnline } from "./presence";

export type EndpointRow = Selectable<RuntimeEndpointsTable>;

/** An endpoint as the API shows it: presence computed now, never the token's id or hash. */
export function endpointView(row: EndpointRow, nowMs: number, presenceTimeoutMs: number): RuntimeEndpoint {
  return {
    endpointId: row.id,
    principalId: String(row.owner_id),
    deviceId: row.device_id,
    runtime: row.runtime,
    presence: isEndpointOnline(row, nowMs, presenceTimeoutMs) ? "online" : "offline",
    lastSeenAt: row.last_seen_at,
    bridgeVersion: row.bridge_version,
    adapterVersion: row.adapter_version,
    capabilities: JSON.parse(row.capabilities) as unknown,
    label: row.label,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    revokedAt: row.revoked_at,
  };
}
