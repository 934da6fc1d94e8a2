import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { isEndpointRegistered } from "../grants";
import type { BridgeEventType, EventBatch } from "../realtime/event-log";
import type { CollaborationRecord } from "./collaboration-records";

type Announced = Pick<CollaborationRecord, "id" | "client_message_id" | "target_id" | "requester_id" | "requester_endpoint_id">;

/** What every event about a collaboration starts with: its ids. */
function collaborationIds(collaboration: Announced): Record<string, unknown> {
  return {
    collaborationId: collaboration.id,
    clientMessageId: collaboration.client_message_id,
    targetPrincipalId: String(collaboration.target_id),
  };
}

/**
 * Tells the bridge that asked for a collaboration (`collaboration.revoked|expired`, kinds bridges
 * know): the collaboration's ids, then `data`. A bridge that has since been revoked hears nothing:
 * no stream of it can open again.
 */
export async function notifyRequestingBridge(
  tx: Kysely<Schema>,
  events: EventBatch,
  collaboration: Announced,
  type: BridgeEventType,
  data: Record<string, unknown>,
): Promise<void> {
  if (!(await isEndpointRegistered(tx, collaboration.requester_endpoint_id))) return;
  await events.append(tx, collaboration.requester_endpoint_id, type, { ...collaborationIds(collaboration), ...data });
}

/**
 * Tells the person who asked, on their user stream (`collaboration.accepted`, a kind bridges do not
 * know: their bridge learns it from its next re-post, which sends the task).
 */
export async function notifyRequester(
  tx: Kysely<Schema>,
  events: EventBatch,
  collaboration: Announced,
  type: string,
  data: Record<string, unknown>,
): Promise<void> {
  await events.appendToUserStream(tx, collaboration.requester_id, type, { ...collaborationIds(collaboration), ...data });
}
