import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import { isEndpointRegistered } from "../grants";
import type { EventBatch } from "../realtime/event-log";
import type { CollaborationRecord } from "./collaboration-records";

/**
 * Tells the bridge that asked for a collaboration (`collaboration.accepted|revoked|expired`): the
 * collaboration's ids, then `data`. A bridge that has since been revoked hears nothing: no stream
 * of it can open again.
 */
export async function notifyRequestingBridge(
  tx: Kysely<Schema>,
  events: EventBatch,
  collaboration: Pick<CollaborationRecord, "id" | "client_message_id" | "target_id" | "requester_endpoint_id">,
  type: string,
  data: Record<string, unknown>,
): Promise<void> {
  if (!(await isEndpointRegistered(tx, collaboration.requester_endpoint_id))) return;
  await events.append(tx, collaboration.requester_endpoint_id, type, {
    collaborationId: collaboration.id,
    clientMessageId: collaboration.client_message_id,
    targetPrincipalId: String(collaboration.target_id),
    ...data,
  });
}
