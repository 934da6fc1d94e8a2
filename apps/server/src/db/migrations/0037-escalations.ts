import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Escalations (docs/escalations.md): agent tool calls paused for their owner's continue / stop.
 *
 * - `paused_runs`: one paused agent run, with everything needed to resume it on any instance after
 *   a restart: the source's own context (`context`, JSON: whose run, under which grant), and the
 *   model's messages so far (`messages`, JSON: ending with the assistant's tool calls and the AI
 *   SDK's approval requests). `status`: `waiting` (an escalation of it is pending, or its resume is
 *   not yet claimed), `resuming` (claimed by one instance at `resume_started_at`), `done`, `failed`.
 * - `escalations`: one paused tool call. `arguments` is the recorded call's input (JSON) and
 *   `arguments_hash` its SHA-256 over canonical JSON; `status` goes `pending` → `continued` |
 *   `stopped` | `expired` by one conditional UPDATE each. `tool_state` records the one execution a
 *   `continue` allows: null (not run), `running` (claimed, conditionally), `done` (`tool_result`
 *   holds what the model is shown, so a resume after a crash replays it instead of running again).
 * - `heartbeat_policies.tool_policy`: the owner's per-tool decisions for heartbeat runs
 *   (JSON `{tool: "allow" | "ask" | "deny"}`), null: none.
 * Times are ISO 8601 (UTC), compared as text.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  await db.schema
    .createTable("paused_runs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("source_type", "text", (c) => c.notNull())
    .addColumn("source_id", "text", (c) => c.notNull())
    .addColumn("context", "text", (c) => c.notNull())
    .addColumn("messages", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("resume_started_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("paused_runs_by_status").on("paused_runs").columns(["status", "updated_at"]).execute();

  await db.schema
    .createTable("escalations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("run_id", "text", (c) => c.notNull().references("paused_runs.id").onDelete("cascade"))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("source_type", "text", (c) => c.notNull())
    .addColumn("source_id", "text", (c) => c.notNull())
    .addColumn("tool_name", "text", (c) => c.notNull())
    .addColumn("tool_call_id", "text", (c) => c.notNull())
    .addColumn("approval_id", "text", (c) => c.notNull())
    .addColumn("summary", "text", (c) => c.notNull())
    .addColumn("consequence", "text", (c) => c.notNull())
    .addColumn("arguments", "text", (c) => c.notNull())
    .addColumn("arguments_hash", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("decided_at", "text")
    .addColumn("decided_by", "text")
    .addColumn("tool_state", "text")
    .addColumn("tool_result", "text")
    .execute();
  await db.schema.createIndex("escalations_by_owner").on("escalations").columns(["owner_id", "created_at"]).execute();
  await db.schema.createIndex("escalations_due").on("escalations").columns(["status", "expires_at"]).execute();
  await db.schema.createIndex("escalations_by_run").on("escalations").column("run_id").execute();

  await db.schema.alterTable("heartbeat_policies").addColumn("tool_policy", "text").execute();
}
