// The webhook outbox's writing side: an event that happens inside a transaction writes one delivery
// row per subscribed endpoint in that same transaction, so the event and its deliveries commit (or
// vanish) together. The worker (webhook-worker.ts) sends them.

import { WEBHOOK_TEST_EVENT, type WebhookEventType } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Clock } from "../clock";
import type { Schema } from "../db/schema";
import type { EventBatch } from "../delegation/realtime/event-log";
import { newId } from "../ids";

/** Deliveries are thin (ids and a summary): a body above this is a bug in the event's builder. */
export const MAX_WEBHOOK_BODY_BYTES = 20 * 1024;
/** How much of a text (a message, a run's answer) a payload's summary carries. */
const SUMMARY_CHARS = 280;

/** What each event's `data` holds. */
export interface WebhookEventData {
  "escalation.requested": { escalationId: string; runId: string | null; tool: string; summary: string; expiresAt: string | null };
  "escalation.resolved": { escalationId: string; decision: "continue" | "stop" | "expired"; resolvedAt: string };
  "message.received": { conversationId: number; messageId: number; fromUserId: number; senderType: string; summary: string };
  "grant.revoked": { grantId: string; requesterId: number; recipientId: number; endedAt: string | null };
  "grant.expired": { grantId: string; requesterId: number; recipientId: number; endedAt: string | null };
  "budget.threshold": { budgetId: string; thresholdPercent: number; spent: number; limit: number; summary: string };
  "heartbeat.run.completed": { runId: number; status: string; delivered: boolean; messageId: number | null; summary: string };
}

/** `text` cut to a summary's length, on a character boundary. */
export function summarize(text: string): string {
  const chars = Array.from(text);
  return chars.length <= SUMMARY_CHARS ? text : `${chars.slice(0, SUMMARY_CHARS - 1).join("")}…`;
}

const wakers = new Set<() => void>();

/** Registers a worker to be woken when deliveries are committed in this process; answers its removal. */
export function onWebhookEnqueued(wake: () => void): () => void {
  wakers.add(wake);
  return () => wakers.delete(wake);
}

/** Wakes this process's workers (other instances find the rows on their next poll). */
export function wakeWebhookWorkers(): void {
  for (const wake of wakers) wake();
}

/** The delivery body, Standard Webhooks' `{type, timestamp, data}`. */
function webhookBody(type: string, timestamp: string, data: object): string {
  const body = JSON.stringify({ type, timestamp, data });
  if (Buffer.byteLength(body) > MAX_WEBHOOK_BODY_BYTES) throw new Error(`a ${type} webhook body of ${body.length} characters is not thin`);
  return body;
}

async function insertDeliveries(
  tx: Kysely<Schema>,
  clock: Clock,
  endpointIds: readonly string[],
  type: string,
  data: object,
): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const now = clock.iso();
  const payload = webhookBody(type, now, data);
  const rows = endpointIds.map((endpointId) => ({
    id: newId("msg"),
    endpoint_id: endpointId,
    event_type: type,
    payload,
    status: "pending" as const,
    next_attempt_at: now,
    created_at: now,
    updated_at: now,
  }));
  await tx.insertInto("webhook_deliveries").values(rows).execute();
  return rows.map((row) => row.id);
}

/**
 * Queues `type` for every enabled endpoint of `ownerId` subscribed to it, inside `tx` (the event's
 * own transaction). With `events`, the workers of this process wake once it is published (after
 * the commit); without, they find the rows on their next poll.
 */
export async function enqueueWebhookEvent<T extends WebhookEventType>(
  tx: Kysely<Schema>,
  events: EventBatch | undefined,
  clock: Clock,
  ownerId: number,
  type: T,
  data: WebhookEventData[T],
): Promise<number> {
  const endpoints = await tx
    .selectFrom("webhook_endpoints")
    .select(["id", "events"])
    .where("owner_id", "=", ownerId)
    .where("status", "=", "enabled")
    .execute();
  const subscribed = endpoints.filter((endpoint) => (JSON.parse(endpoint.events) as string[]).includes(type)).map((e) => e.id);
  const ids = await insertDeliveries(tx, clock, subscribed, type, data);
  if (ids.length > 0) events?.afterPublish(wakeWebhookWorkers);
  return ids.length;
}

/** Queues the `webhook.test` delivery for one endpoint; answers its id. */
export async function enqueueTestDelivery(tx: Kysely<Schema>, clock: Clock, endpointId: string): Promise<string> {
  const [id] = await insertDeliveries(tx, clock, [endpointId], WEBHOOK_TEST_EVENT, {
    endpointId,
    summary: "A test delivery from Tandem: if your receiver verified this, it is ready.",
  });
  return id as string;
}

/** A paused tool call waiting for the owner (agent/escalations/, and bridge approvals). */
export function enqueueEscalationRequested(
  tx: Kysely<Schema>,
  events: EventBatch | undefined,
  clock: Clock,
  ownerId: number,
  data: WebhookEventData["escalation.requested"],
): Promise<number> {
  return enqueueWebhookEvent(tx, events, clock, ownerId, "escalation.requested", { ...data, summary: summarize(data.summary) });
}

/** An escalation decided by its owner, or expired. */
export function enqueueEscalationResolved(
  tx: Kysely<Schema>,
  events: EventBatch | undefined,
  clock: Clock,
  ownerId: number,
  data: WebhookEventData["escalation.resolved"],
): Promise<number> {
  return enqueueWebhookEvent(tx, events, clock, ownerId, "escalation.resolved", data);
}

/** For the metering part (being built): spending crossed one of the owner's thresholds. */
export function enqueueBudgetThreshold(
  tx: Kysely<Schema>,
  events: EventBatch | undefined,
  clock: Clock,
  ownerId: number,
  data: WebhookEventData["budget.threshold"],
): Promise<number> {
  return enqueueWebhookEvent(tx, events, clock, ownerId, "budget.threshold", { ...data, summary: summarize(data.summary) });
}
