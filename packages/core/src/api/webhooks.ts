import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/**
 * Webhooks (Standard Webhooks 1.0): what a receiver can subscribe to. `escalation.*` and
 * `budget.threshold` are announced by parts of the server still being built; subscribing to them
 * is allowed now so an endpoint need not change when they arrive.
 */
export const WEBHOOK_EVENT_TYPES = [
  "escalation.requested",
  "escalation.resolved",
  "message.received",
  "grant.revoked",
  "grant.expired",
  "budget.threshold",
  "heartbeat.run.completed",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of the delivery `POST /webhooks/{id}/test` sends (never subscribed to: every endpoint gets it when asked). */
export const WEBHOOK_TEST_EVENT = "webhook.test";

export const MAX_WEBHOOK_URL_CHARS = 2000;
export const MAX_WEBHOOK_DESCRIPTION_CHARS = 500;

const WebhookUrl = z
  .string()
  .max(MAX_WEBHOOK_URL_CHARS)
  .url()
  .regex(/^https?:\/\//i, { error: "must be an http:// or https:// URL" })
  .describe("where deliveries are POSTed; checked against loopback, private and metadata addresses after DNS, on every attempt");

const WebhookEvents = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((events) => new Set(events).size === events.length, { error: "name each event once" });

const WebhookDescription = z.string().max(MAX_WEBHOOK_DESCRIPTION_CHARS);

export const WebhookEndpoint = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string(),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
  status: z.enum(["enabled", "disabled"]),
  disabledReason: z.string().nullable().describe("why it was disabled: `gone` (410), `failing` (5 days), `owner`"),
  failingSince: Timestamp.nullable().describe("the first failure of the current run of failures"),
  previousSecretExpiresAt: Timestamp.nullable().describe("after a rotation: until when the old secret also signs"),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const WebhookAnswer = success({ webhook: WebhookEndpoint });
const WebhookWithSecret = success({
  webhook: WebhookEndpoint,
  secret: z.string().describe("`whsec_…`: shown this once; give it to the receiver's Standard Webhooks library"),
});

export const WebhookAttempt = z.object({
  attemptedAt: Timestamp,
  statusCode: z.number().int().nullable().describe("the receiver's HTTP status; null when none came (timeout, refused address, network)"),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  nextAttemptAt: Timestamp.nullable().describe("when it is tried again; null after a success or the last try"),
});

export const WebhookDelivery = z.object({
  id: z.string().describe("the `webhook-id` header, the same on every attempt and replay"),
  type: z.string(),
  status: z.enum(["pending", "succeeded", "failed"]),
  attemptCount: z.number().int(),
  nextAttemptAt: Timestamp.nullable(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: Timestamp,
  attempts: z.array(WebhookAttempt),
});

const WebhookId = z.object({ id: z.string().min(1).max(100) });

export const webhookRoutes = {
  listWebhooks: defineRoute({
    method: "GET",
    path: "/webhooks",
    category: "webhooks",
    summary: "The caller's webhook endpoints (never a secret)",
    auth: "user",
    scope: "os.tools:read",
    response: success({ webhooks: z.array(WebhookEndpoint) }),
  }),
  createWebhook: defineRoute({
    method: "POST",
    path: "/webhooks",
    category: "webhooks",
    summary: "Add a webhook endpoint; answers its signing secret once",
    auth: "user",
    scope: "os.tools:write",
    bodyLimit: 16 * 1024,
    body: z.object({ url: WebhookUrl, events: WebhookEvents, description: WebhookDescription.optional() }),
    response: WebhookWithSecret,
    successStatuses: [201],
  }),
  getWebhook: defineRoute({
    method: "GET",
    path: "/webhooks/:id",
    category: "webhooks",
    summary: "One webhook endpoint",
    auth: "user",
    scope: "os.tools:read",
    params: WebhookId,
    response: WebhookAnswer,
  }),
  updateWebhook: defineRoute({
    method: "PATCH",
    path: "/webhooks/:id",
    category: "webhooks",
    summary: "Change an endpoint's URL, events or description, or enable or disable it (enabling clears its failures)",
    auth: "user",
    scope: "os.tools:write",
    bodyLimit: 16 * 1024,
    params: WebhookId,
    body: z
      .object({
        url: WebhookUrl.optional(),
        events: WebhookEvents.optional(),
        description: WebhookDescription.optional(),
        enabled: z.boolean().optional(),
      })
      .refine((body) => Object.values(body).some((value) => value !== undefined), { error: "give url, events, description or enabled" }),
    response: WebhookAnswer,
  }),
  deleteWebhook: defineRoute({
    method: "DELETE",
    path: "/webhooks/:id",
    category: "webhooks",
    summary: "Remove an endpoint with its pending deliveries and its log",
    auth: "user",
    scope: "os.tools:write",
    params: WebhookId,
    response: success({}),
  }),
  rotateWebhookSecret: defineRoute({
    method: "POST",
    path: "/webhooks/:id/rotate-secret",
    category: "webhooks",
    summary: "A new signing secret, answered once; the old one keeps signing beside it for 24 hours",
    auth: "user",
    scope: "os.tools:write",
    params: WebhookId,
    response: WebhookWithSecret,
  }),
  testWebhook: defineRoute({
    method: "POST",
    path: "/webhooks/:id/test",
    category: "webhooks",
    summary: `Queue a \`${WEBHOOK_TEST_EVENT}\` delivery to the endpoint now (it goes through the outbox like any other)`,
    auth: "user",
    scope: "os.tools:write",
    params: WebhookId,
    response: success({ delivery: WebhookDelivery }),
    successStatuses: [201],
  }),
  listWebhookDeliveries: defineRoute({
    method: "GET",
    path: "/webhooks/:id/deliveries",
    category: "webhooks",
    summary: "The endpoint's deliveries, newest first, each with its attempts (time, status code, duration, error, next try)",
    auth: "user",
    scope: "os.tools:read",
    params: WebhookId,
    query: z.object({
      limit: z.coerce.number().int().min(1).max(100).default(50),
      status: z.enum(["pending", "succeeded", "failed"]).optional(),
    }),
    response: success({ deliveries: z.array(WebhookDelivery) }),
  }),
  replayWebhookDelivery: defineRoute({
    method: "POST",
    path: "/webhooks/:id/deliveries/:deliveryId/replay",
    category: "webhooks",
    summary: "Send a finished delivery again, with the same webhook-id and body (409 while it is still pending)",
    auth: "user",
    scope: "os.tools:write",
    params: z.object({ id: z.string().min(1).max(100), deliveryId: z.string().min(1).max(100) }),
    response: success({ delivery: WebhookDelivery }),
  }),
} as const;
