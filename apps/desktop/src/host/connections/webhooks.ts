import { MAX_WEBHOOK_DESCRIPTION_CHARS, MAX_WEBHOOK_URL_CHARS, TandemApiError, WEBHOOK_EVENT_TYPES } from "@tandem/core";
import { z } from "zod";
import type { WebhookDeliveryItem, WebhookItem, WebhookWithSecret } from "../../shared/desktop-api";
import type { WebhooksFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import { connectionsCall, isObjectMissing, isRouteMissing, lacksScope, readAnswer, webAddress } from "./connections-call";

/** Said when the server has no webhook routes (an older server). */
export const WEBHOOKS_UNSUPPORTED = "This server doesn't support webhooks yet.";

/** Said instead of the list when the desktop's key lacks the `os.tools` scopes (a pairing-code sign-in: no failure). */
export const WEBHOOKS_NOT_ALLOWED =
  "This desktop's key is not allowed to manage webhooks: it lacks the os.tools:read and os.tools:write permissions. " +
  "A desktop signed in with a pairing code never has them. To manage webhooks here, sign out and sign in with an API key that has them.";

/** Said when the endpoint named was removed meanwhile (on another device, say). */
export const WEBHOOK_GONE = "This webhook is no longer there; it may have been removed elsewhere.";

/** A receiver's error can be a whole page: this much says what went wrong. */
const ERROR_MAX = 300;
/** The deliveries shown per endpoint (the server keeps more). */
const DELIVERIES_SHOWN = 25;

// Core's `WebhookEndpoint` and `WebhookDelivery`, read leniently: fields this view does not use may come and go.
const EndpointShape = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string().optional().default(""),
  events: z.array(z.string()).optional().default([]),
  status: z.string(),
  disabledReason: z.string().nullable().optional(),
  failingSince: z.string().nullable().optional(),
  previousSecretExpiresAt: z.string().nullable().optional(),
  createdAt: z.string(),
});
const AttemptShape = z.object({
  attemptedAt: z.string(),
  statusCode: z.number().int().nullable().optional(),
  durationMs: z.number().optional().default(0),
  error: z.string().nullable().optional(),
});
const DeliveryShape = z.object({
  id: z.string(),
  type: z.string(),
  status: z.enum(["pending", "succeeded", "failed"]).catch("failed"),
  attemptCount: z.number().int().optional().default(0),
  nextAttemptAt: z.string().nullable().optional(),
  lastStatusCode: z.number().int().nullable().optional(),
  lastError: z.string().nullable().optional(),
  createdAt: z.string(),
  attempts: z.array(AttemptShape).optional().default([]),
});
const EndpointList = z.object({ webhooks: z.array(EndpointShape) });
const EndpointWithSecret = z.object({ webhook: EndpointShape, secret: z.string().startsWith("whsec_") });
const OneEndpoint = z.object({ webhook: EndpointShape });
const DeliveryList = z.object({ deliveries: z.array(DeliveryShape) });
const OneDelivery = z.object({ delivery: DeliveryShape });

// Core's bounds, checked here so a mistake is said before anything goes out.
const Id = z.string().min(1).max(100);
const AddInput = z.object({
  url: z
    .string()
    .trim()
    .max(MAX_WEBHOOK_URL_CHARS, { error: "The address is too long" })
    .refine(webAddress, { error: "The address must start with https:// (or http://)" }),
  events: z
    .array(z.enum(WEBHOOK_EVENT_TYPES, { error: "is not an event this server sends" }))
    .min(1, { error: "Pick at least one event" })
    .transform((events) => [...new Set(events)]),
  description: z.string().trim().max(MAX_WEBHOOK_DESCRIPTION_CHARS, { error: "The description is too long" }).optional(),
});
const IdInput = z.object({ id: Id });
const EnabledInput = z.object({ id: Id, enabled: z.boolean() });
const ReplayInput = z.object({ id: Id, deliveryId: Id });

const DISABLED_WORDS: Record<string, string> = {
  owner: "Turned off by you.",
  gone: "Turned off because the receiver answered 410 Gone (it asked for no more deliveries).",
  failing: "Turned off because no delivery has succeeded for 5 days.",
};

function oneLine(text: string | null | undefined): string | null {
  if (typeof text !== "string" || text.trim() === "") return null;
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > ERROR_MAX ? `${line.slice(0, ERROR_MAX)}…` : line;
}

export function webhookItem(endpoint: z.output<typeof EndpointShape>): WebhookItem {
  const enabled = endpoint.status === "enabled";
  const reason = endpoint.disabledReason ?? "";
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    enabled,
    disabledReason: enabled ? null : (DISABLED_WORDS[reason] ?? (reason ? `Turned off (${oneLine(reason)}).` : "Turned off.")),
    failingSince: endpoint.failingSince ?? null,
    previousSecretExpiresAt: endpoint.previousSecretExpiresAt ?? null,
    createdAt: endpoint.createdAt,
  };
}

export function deliveryItem(delivery: z.output<typeof DeliveryShape>): WebhookDeliveryItem {
  return {
    id: delivery.id,
    type: delivery.type,
    status: delivery.status,
    attemptCount: delivery.attemptCount,
    nextAttemptAt: delivery.status === "pending" ? (delivery.nextAttemptAt ?? null) : null,
    lastStatusCode: delivery.lastStatusCode ?? null,
    lastError: oneLine(delivery.lastError),
    createdAt: delivery.createdAt,
    attempts: delivery.attempts.map((attempt) => ({
      attemptedAt: attempt.attemptedAt,
      statusCode: attempt.statusCode ?? null,
      durationMs: Math.max(0, Math.round(attempt.durationMs)),
      error: oneLine(attempt.error),
    })),
  };
}

/** `GET /webhooks`'s answer; exported for the tests. */
export function readWebhookList(answer: unknown): WebhookItem[] {
  return readAnswer(EndpointList, answer, "webhooks").webhooks.map(webhookItem);
}

/** An answer carrying a secret (add, rotate); a secret that is not `whsec_…` is not understood. */
export function readWebhookWithSecret(answer: unknown): WebhookWithSecret {
  const { webhook, secret } = readAnswer(EndpointWithSecret, answer, "the webhook");
  return { webhook: webhookItem(webhook), secret };
}

/** The server's refusals of one endpoint in words: gone, turned off, still being tried. */
function aboutOne<T>(request: () => Promise<T>): Promise<T> {
  return connectionsCall(request).catch((error: unknown) => {
    if (isRouteMissing(error)) throw new Error(WEBHOOKS_UNSUPPORTED, { cause: error });
    const code = error instanceof Error && error.cause instanceof TandemApiError ? error.cause.body.error : null;
    if (code === "webhook_disabled") throw new Error("This webhook is turned off; turn it on first.", { cause: error });
    if (code === "delivery_pending") {
      throw new Error("This delivery is still being tried; it can be sent again once it has succeeded or failed.", { cause: error });
    }
    if (isObjectMissing(error)) throw new Error(WEBHOOK_GONE, { cause: error });
    throw error;
  });
}

export function createWebhookMethods(session: SessionService): WebhooksFacet {
  const signedIn = () => {
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  return {
    async listWebhooks() {
      const client = signedIn();
      const eventTypes = [...WEBHOOK_EVENT_TYPES];
      try {
        return { supported: true, webhooks: readWebhookList(await connectionsCall(() => client.call("listWebhooks"))), eventTypes };
      } catch (error) {
        if (isRouteMissing(error)) return { supported: false, webhooks: [], eventTypes };
        if (lacksScope(error)) return { supported: true, webhooks: [], eventTypes, notAllowed: WEBHOOKS_NOT_ALLOWED };
        throw error;
      }
    },

    async addWebhook(input) {
      const { url, events, description } = parseInput("addWebhook", AddInput, input);
      const client = signedIn();
      const body = { url, events, ...(description ? { description } : {}) };
      const answer = await connectionsCall(() => client.call("createWebhook", { body })).catch((error: unknown) => {
        if (isRouteMissing(error)) throw new Error(WEBHOOKS_UNSUPPORTED, { cause: error });
        throw error;
      });
      return readWebhookWithSecret(answer);
    },

    async setWebhookEnabled(input) {
      const { id, enabled } = parseInput("setWebhookEnabled", EnabledInput, input);
      const client = signedIn();
      const answer = await aboutOne(() => client.call("updateWebhook", { params: { id }, body: { enabled } }));
      return webhookItem(readAnswer(OneEndpoint, answer, "the webhook").webhook);
    },

    async rotateWebhookSecret(input) {
      const { id } = parseInput("rotateWebhookSecret", IdInput, input);
      const client = signedIn();
      return readWebhookWithSecret(await aboutOne(() => client.call("rotateWebhookSecret", { params: { id } })));
    },

    async testWebhook(input) {
      const { id } = parseInput("testWebhook", IdInput, input);
      const client = signedIn();
      const answer = await aboutOne(() => client.call("testWebhook", { params: { id } }));
      return deliveryItem(readAnswer(OneDelivery, answer, "the test delivery").delivery);
    },

    async listWebhookDeliveries(input) {
      const { id } = parseInput("listWebhookDeliveries", IdInput, input);
      const client = signedIn();
      const answer = await aboutOne(() => client.call("listWebhookDeliveries", { params: { id }, query: { limit: DELIVERIES_SHOWN } }));
      return readAnswer(DeliveryList, answer, "the webhook's deliveries").deliveries.map(deliveryItem);
    },

    async replayWebhookDelivery(input) {
      const { id, deliveryId } = parseInput("replayWebhookDelivery", ReplayInput, input);
      const client = signedIn();
      const answer = await aboutOne(() => client.call("replayWebhookDelivery", { params: { id, deliveryId } }));
      return deliveryItem(readAnswer(OneDelivery, answer, "the delivery").delivery);
    },

    async removeWebhook(input) {
      const { id } = parseInput("removeWebhook", IdInput, input);
      const client = signedIn();
      await connectionsCall(() => client.call("deleteWebhook", { params: { id } })).catch((error: unknown) => {
        if (isRouteMissing(error)) throw new Error(WEBHOOKS_UNSUPPORTED, { cause: error });
        // Already gone (removed elsewhere): what the owner asked for is done.
        if (isObjectMissing(error)) return;
        throw error;
      });
    },
  };
}
