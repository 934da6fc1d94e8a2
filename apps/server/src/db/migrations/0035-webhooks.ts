import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Webhooks (Standard Webhooks 1.0, docs/webhooks.md).
 *
 * - `webhook_endpoints`: one receiver URL of one owner and the events it wants. `secret_sealed` is
 *   the signing secret (`whsec_…`) sealed with the server's SecretBox; after a rotation the old one
 *   stays in `previous_secret_sealed` until `previous_secret_expires_at` (both sign meanwhile).
 *   `failing_since`: when the first of the current run of failures happened (null while healthy).
 * - `webhook_deliveries`: the outbox. A row is written in the transaction of the event it announces;
 *   `id` is the `webhook-id` header, stable across retries. A worker claims a due row by setting
 *   `lease_token` and `lease_expires_at` in one UPDATE whose WHERE requires the previous lease to be
 *   over, so two instances never hold one row at once and a crashed holder's row comes back.
 * - `webhook_attempts`: each try of a delivery (the delivery log).
 * Times are ISO 8601 (UTC), compared as text.
 */
export async function up(db: Kysely<unknown>, context: MigrationContext): Promise<void> {
  await db.schema
    .createTable("webhook_endpoints")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("secret_sealed", "text", (c) => c.notNull())
    .addColumn("previous_secret_sealed", "text")
    .addColumn("previous_secret_expires_at", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("disabled_reason", "text")
    .addColumn("failing_since", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhook_endpoints_by_owner").on("webhook_endpoints").column("owner_id").execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("endpoint_id", "text", (c) => c.notNull().references("webhook_endpoints.id").onDelete("cascade"))
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempt_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "text")
    .addColumn("lease_token", "text")
    .addColumn("lease_expires_at", "text")
    .addColumn("last_status_code", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("webhook_deliveries_due").on("webhook_deliveries").columns(["status", "next_attempt_at"]).execute();
  await db.schema.createIndex("webhook_deliveries_by_endpoint").on("webhook_deliveries").columns(["endpoint_id", "created_at"]).execute();

  await context
    .addIdColumn(db.schema.createTable("webhook_attempts"))
    .addColumn("delivery_id", "text", (c) => c.notNull().references("webhook_deliveries.id").onDelete("cascade"))
    .addColumn("attempted_at", "text", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("next_attempt_at", "text")
    .execute();
  await db.schema.createIndex("webhook_attempts_by_delivery").on("webhook_attempts").column("delivery_id").execute();
}
