// Where today's events reach the outbox, each inside the transaction that makes it happen.

import type { AppContext } from "../context";
import { type GrantEndHook, onGrantEnd } from "../delegation/grants/grant-ending";
import { enqueueWebhookEvent } from "./webhook-outbox";

/** `grant.revoked` / `grant.expired` to both parties, in the commit that ends the grant. */
const grantEnded: GrantEndHook = async (context, unit, ending) => {
  if (ending.status === "declined") return;
  const { grant } = ending;
  const requesterId = Number(grant.requester_id);
  const recipientId = Number(grant.recipient_id);
  const data = { grantId: grant.id, requesterId, recipientId, endedAt: grant.ended_at };
  for (const ownerId of new Set([requesterId, recipientId])) {
    await enqueueWebhookEvent(unit.tx, unit.events, context.clock, ownerId, `grant.${ending.status}`, data);
  }
};

/** Hooks the outbox into the events raised through registries (idempotent). */
export function wireWebhookEvents(_app: AppContext): void {
  onGrantEnd(grantEnded);
}
