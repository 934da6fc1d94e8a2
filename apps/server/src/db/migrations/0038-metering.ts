import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Metering and budget caps (docs/metering.md).
 *
 * - `model_usage` gains `agent_id` and `device_id`.
 *
 * - `meter_counters`: usage aggregated as it is recorded, one row per owner × period × dimension.
 *   `period` is a month (`2026-12`) or, for the daily run budgets, a day (`2026-12-08`); `dim` is
 *   `account` (`dim_key` ''), `model` (`provider|model`), `source`, `apiKey`, `agent` or `device`.
 *   Rows only ever grow through `insert … on conflict do update set x = x + excluded.x` (one
 *   atomic statement on both databases), never read-then-write.
 * - `meter_active_devices`: the devices active in a month (heartbeat, delivery ack, registration):
 *   a device counts once per month however often it is seen.
 * - `meter_budgets`: the owner's budgets per scope (`account`, `apiKey`, `agent`, `device`).
 * - `meter_notices`: a threshold (80, 100) of a budget already announced in a period, so it is
 *   announced once per period whichever instance crosses it.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  // The managed agent and device a model call was made for (null: none).
  await db.schema.alterTable("model_usage").addColumn("agent_id", "text").execute();
  await db.schema.alterTable("model_usage").addColumn("device_id", "text").execute();
  await db.schema
    .createTable("meter_counters")
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("dim", "text", (c) => c.notNull())
    .addColumn("dim_key", "text", (c) => c.notNull())
    .addColumn("tokens_in", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("tokens_out", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("model_calls", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("runs", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("tool_calls", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("credits", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("active_devices", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("meter_counters_pk", ["owner_id", "period", "dim", "dim_key"])
    .execute();

  await db.schema
    .createTable("meter_active_devices")
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("month", "text", (c) => c.notNull())
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("first_seen_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("meter_active_devices_pk", ["owner_id", "month", "device_id"])
    .execute();

  await db.schema
    .createTable("meter_budgets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("scope_id", "text", (c) => c.notNull())
    .addColumn("tokens_per_month", "bigint")
    .addColumn("runs_per_day", "bigint")
    .addColumn("active_devices", "bigint")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addUniqueConstraint("meter_budgets_scope", ["owner_id", "scope", "scope_id"])
    .execute();

  await db.schema
    .createTable("meter_notices")
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("budget", "text", (c) => c.notNull())
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("threshold", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("meter_notices_pk", ["owner_id", "budget", "period", "threshold"])
    .execute();
}
