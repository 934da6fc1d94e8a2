import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import type { BridgeEventType, EventBatch } from "../realtime/event-log";
import type { GrantRecord } from "./grant-rows";
import { isEndpointRegistered } from "./routes-of-parties";

type Data = Record<string, unknown>;

/** To one side's endpoint while it is still registered, otherwise to every endpoint of that person. */
async function notifySide(
  tx: Kysely<Schema>,
  events: EventBatch,
  side: { endpointId: string | null; userId: number },
  type: BridgeEventType,
  data: Data,
): Promise<void> {
  const { endpointId } = side;
  if (endpointId !== null && (await isEndpointRegistered(tx, endpointId))) await events.append(tx, endpointId, type, data);
  else await events.appendToUser(tx, side.userId, type, data);
}

/**
 * Tells the requester's side: their reply endpoint when it is still registered, otherwise every
 * endpoint they have (a grant asked for with a user key may have no route of its own).
 */
export async function notifyRequester(
  tx: Kysely<Schema>,
  events: EventBatch,
  grant: GrantRecord,
  type: BridgeEventType,
  data: Data,
): Promise<void> {
  await notifySide(tx, events, { endpointId: grant.requester_reply_endpoint_id, userId: grant.requester_id }, type, data);
}

/** Tells the recipient's side: the frozen endpoint of an accepted grant, otherwise all their endpoints. */
export async function notifyRecipient(
  tx: Kysely<Schema>,
  events: EventBatch,
  grant: GrantRecord,
  type: BridgeEventType,
  data: Data,
): Promise<void> {
  await notifySide(tx, events, { endpointId: grant.frozen_endpoint_id, userId: grant.recipient_id }, type, data);
}
