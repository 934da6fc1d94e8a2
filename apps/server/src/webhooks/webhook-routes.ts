import type { WebhookEventType } from "@tandem/core";
import type { Selectable } from "kysely";
import { refuseUnsafeUrl } from "../agent/tools/mcp/address-guard";
import type { AppContext } from "../context";
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from "../db/schema";
import { ApiError, notFound } from "../http/errors";
import { created } from "../http/reply";
import type { RouteHandlers } from "../http/router";
import { newId } from "../ids";
import { enqueueTestDelivery, wakeWebhookWorkers } from "./webhook-outbox";
import { newWebhookSecret, ROTATION_OVERLAP_MS, sealWebhookSecret } from "./webhook-secrets";

type WebhookRouteId =
  | "listWebhooks"
  | "createWebhook"
  | "getWebhook"
  | "updateWebhook"
  | "deleteWebhook"
  | "rotateWebhookSecret"
  | "testWebhook"
  | "listWebhookDeliveries"
  | "replayWebhookDelivery";

/** Endpoints one user may have. */
export const MAX_WEBHOOKS_PER_USER = 20;

type EndpointRow = Selectable<WebhookEndpointsTable>;
type DeliveryRow = Selectable<WebhookDeliveriesTable>;

function endpointView(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as WebhookEventType[],
    status: row.status,
    disabledReason: row.disabled_reason,
    failingSince: row.failing_since,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Refused before anything is stored when the URL's host is private (checked again on every attempt). */
function checkAddress(app: AppContext, url: string): Promise<void> {
  return refuseUnsafeUrl(url, app.config.allowPrivateWebhooks, "TANDEM_ALLOW_PRIVATE_WEBHOOKS");
}

async function ownedEndpoint(app: AppContext, ownerId: number, id: string): Promise<EndpointRow> {
  const row = await app.db
    .selectFrom("webhook_endpoints")
    .selectAll()
    .where("id", "=", id)
    .where("owner_id", "=", ownerId)
    .executeTakeFirst();
  // Another owner's endpoint is as absent as one that never was.
  if (!row) throw notFound("webhook");
  return row;
}

async function deliveriesView(app: AppContext, rows: readonly DeliveryRow[]) {
  const attempts =
    rows.length === 0
      ? []
      : await app.db
          .selectFrom("webhook_attempts")
          .selectAll()
          .where(
            "delivery_id",
            "in",
            rows.map((row) => row.id),
          )
          .orderBy("id")
          .execute();
  return rows.map((row) => ({
    id: row.id,
    type: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === "pending" ? row.next_attempt_at : null,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: row.created_at,
    attempts: attempts
      .filter((attempt) => attempt.delivery_id === row.id)
      .map((attempt) => ({
        attemptedAt: attempt.attempted_at,
        statusCode: attempt.status_code,
        durationMs: attempt.duration_ms,
        error: attempt.error,
        nextAttemptAt: attempt.next_attempt_at,
      })),
  }));
}

async function oneDelivery(app: AppContext, endpointId: string, deliveryId: string) {
  const row = await app.db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("id", "=", deliveryId)
    .where("endpoint_id", "=", endpointId)
    .executeTakeFirst();
  if (!row) throw notFound("delivery");
  const [view] = await deliveriesView(app, [row]);
  return view as NonNullable<typeof view>;
}

export function webhookHandlers(app: AppContext): RouteHandlers<WebhookRouteId> {
  const { db, clock, secrets } = app;

  return {
    listWebhooks: async ({ principal }) => {
      const rows = await db
        .selectFrom("webhook_endpoints")
        .selectAll()
        .where("owner_id", "=", principal.userId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return { success: true, webhooks: rows.map(endpointView) };
    },

    createWebhook: async ({ input, principal }) => {
      const { url, events, description } = input.body;
      const { count } = await db
        .selectFrom("webhook_endpoints")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("owner_id", "=", principal.userId)
        .executeTakeFirstOrThrow();
      if (Number(count) >= MAX_WEBHOOKS_PER_USER) {
        throw new ApiError(409, "too_many_webhooks", `you have ${MAX_WEBHOOKS_PER_USER} webhook endpoints already; remove one first`);
      }
      await checkAddress(app, url);
      const secret = newWebhookSecret();
      const now = clock.iso();
      const row = await db
        .insertInto("webhook_endpoints")
        .values({
          id: newId("whk"),
          owner_id: principal.userId,
          url,
          description: description ?? "",
          events: JSON.stringify(events),
          secret_sealed: sealWebhookSecret(secrets, secret),
          status: "enabled",
          created_at: now,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return created({ success: true, webhook: endpointView(row), secret });
    },

    getWebhook: async ({ input, principal }) => ({
      success: true,
      webhook: endpointView(await ownedEndpoint(app, principal.userId, input.params.id)),
    }),

    updateWebhook: async ({ input, principal }) => {
      const row = await ownedEndpoint(app, principal.userId, input.params.id);
      const { url, events, description, enabled } = input.body;
      if (url !== undefined) await checkAddress(app, url);
      const updated = await db
        .updateTable("webhook_endpoints")
        .set({
          ...(url !== undefined ? { url } : {}),
          ...(events !== undefined ? { events: JSON.stringify(events) } : {}),
          ...(description !== undefined ? { description } : {}),
          // Enabling starts afresh: the failures that disabled it are forgotten.
          ...(enabled === true ? { status: "enabled" as const, disabled_reason: null, failing_since: null } : {}),
          ...(enabled === false ? { status: "disabled" as const, disabled_reason: "owner" } : {}),
          updated_at: clock.iso(),
        })
        .where("id", "=", row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { success: true, webhook: endpointView(updated) };
    },

    deleteWebhook: async ({ input, principal }) => {
      const row = await ownedEndpoint(app, principal.userId, input.params.id);
      await db.transaction().execute(async (tx) => {
        // SQLite enforces the cascade only with foreign keys on: delete the children explicitly.
        const deliveries = tx.selectFrom("webhook_deliveries").select("id").where("endpoint_id", "=", row.id);
        await tx.deleteFrom("webhook_attempts").where("delivery_id", "in", deliveries).execute();
        await tx.deleteFrom("webhook_deliveries").where("endpoint_id", "=", row.id).execute();
        await tx.deleteFrom("webhook_endpoints").where("id", "=", row.id).execute();
      });
      return { success: true };
    },

    rotateWebhookSecret: async ({ input, principal }) => {
      const row = await ownedEndpoint(app, principal.userId, input.params.id);
      const secret = newWebhookSecret();
      const now = clock.now();
      const updated = await db
        .updateTable("webhook_endpoints")
        .set({
          secret_sealed: sealWebhookSecret(secrets, secret),
          previous_secret_sealed: row.secret_sealed,
          previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(),
          updated_at: now.toISOString(),
        })
        .where("id", "=", row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { success: true, webhook: endpointView(updated), secret };
    },

    testWebhook: async ({ input, principal }) => {
      const row = await ownedEndpoint(app, principal.userId, input.params.id);
      if (row.status !== "enabled") throw new ApiError(409, "webhook_disabled", "the endpoint is disabled; enable it first");
      const id = await db.transaction().execute((tx) => enqueueTestDelivery(tx, clock, row.id));
      wakeWebhookWorkers();
      return created({ success: true, delivery: await oneDelivery(app, row.id, id) });
    },

    listWebhookDeliveries: async ({ input, principal }) => {
      const row = await ownedEndpoint(app, principal.userId, input.params.id);
      const { limit, status } = input.query;
      const rows = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("endpoint_id", "=", row.id)
        .$if(status !== undefined, (qb) => qb.where("status", "=", status as NonNullable<typeof status>))
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .limit(limit)
        .execute();
      return { success: true, deliveries: await deliveriesView(app, rows) };
    },

    replayWebhookDelivery: async ({ input, principal }) => {
      const row = await ownedEndpoint(app, principal.userId, input.params.id);
      if (row.status !== "enabled") throw new ApiError(409, "webhook_disabled", "the endpoint is disabled; enable it first");
      const delivery = await oneDelivery(app, row.id, input.params.deliveryId);
      const now = clock.iso();
      const replayed = await db
        .updateTable("webhook_deliveries")
        .set({ status: "pending", next_attempt_at: now, lease_token: null, lease_expires_at: null, updated_at: now })
        .where("id", "=", delivery.id)
        .where("status", "!=", "pending")
        .executeTakeFirst();
      if (Number(replayed.numUpdatedRows) === 0) throw new ApiError(409, "delivery_pending", "the delivery is still being tried");
      wakeWebhookWorkers();
      return { success: true, delivery: await oneDelivery(app, row.id, delivery.id) };
    },
  };
}
