import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import type { EventBatch } from "../realtime/event-log";

/**
 * Tells the bridge that asked for a collaboration (`collaboration.accepted|revoked|expired`).
 * A bridge that has since been revoked hears nothing: no stream of it can open again.
 */
export async function notifyRequestingBridge(
  tx: Kysely<Schema>,
  events: EventBatch,
  collaboration: { requester_endpoint_id: string },
  type: string,
  data: Record<string, unknown>,
): Promise<void> {
  const endpoint = await tx
    .selectFrom("runtime_endpoints")
    .select("id")
    .where("id", "=", collaboration.requester_endpoint_id)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (endpoint) await events.append(tx, endpoint.id, type, data);
}
