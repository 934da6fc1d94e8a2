import { type Kysely, sql } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * The heartbeat: each user's policy and schedule, every run and every action a run took, and
 * unread tracking for the messages it delivers.
 *
 * - `heartbeat_policies.next_run_at` is the durable schedule: a scheduler claims a due run by
 *   moving it forward with a compare-and-set, so a restart neither skips nor doubles a run and
 *   two server instances never both claim one. It is null while the schedule is off.
 * - At most one run per user is `running`, enforced by a partial unique index: a manual run and a
 *   scheduled one (on any instance) cannot overlap.
 * - `agent_messages.read_at` is null for a message its owner has not read yet; messages already
 *   stored were all seen in the chat that wrote them.
 */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("heartbeat_policies")
    .addColumn("user_id", "bigint", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    .addColumn("tier", "text", (c) => c.notNull().defaultTo("MESSAGES"))
    .addColumn("schedule_enabled", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("every_minutes", "integer", (c) => c.notNull().defaultTo(60))
    // HH:MM in `timezone`; both null: no quiet hours.
    .addColumn("quiet_start", "text")
    .addColumn("quiet_end", "text")
    .addColumn("timezone", "text", (c) => c.notNull().defaultTo("UTC"))
    .addColumn("next_run_at", "text")
    // The owner's heartbeat thread (an `agent` conversation); not a reference: the owner may delete it.
    .addColumn("conversation_id", "bigint")
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("heartbeat_policies_due").on("heartbeat_policies").column("next_run_at").execute();

  await db.schema
    .createTable("heartbeat_runs")
    .$call(addIdColumn)
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("tier", "text", (c) => c.notNull())
    // manual | schedule
    .addColumn("source", "text", (c) => c.notNull())
    // running | completed | failed
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("dry_run", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("started_at", "text", (c) => c.notNull())
    .addColumn("completed_at", "text")
    .addColumn("model", "text")
    .addColumn("text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("suppressed", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("suppress_reason", "text")
    .addColumn("delivered", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("conversation_id", "bigint")
    .addColumn("message_id", "bigint")
    .addColumn("tool_calls", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("actions_created", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("elapsed_ms", "integer")
    .addColumn("error", "text")
    .execute();
  await db.schema.createIndex("heartbeat_runs_by_owner").on("heartbeat_runs").columns(["owner_id", "started_at"]).execute();
  await db.schema.createIndex("heartbeat_runs_by_start").on("heartbeat_runs").column("started_at").execute();
  await db.schema
    .createIndex("heartbeat_runs_one_running")
    .on("heartbeat_runs")
    .column("owner_id")
    .unique()
    .where(sql.ref("status"), "=", "running")
    .execute();

  await db.schema
    .createTable("heartbeat_actions")
    .$call(addIdColumn)
    .addColumn("run_id", "bigint", (c) => c.notNull().references("heartbeat_runs.id").onDelete("cascade"))
    .addColumn("owner_id", "bigint", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    // message | action
    .addColumn("mode", "text", (c) => c.notNull())
    // executed | skipped | failed
    .addColumn("status", "text", (c) => c.notNull())
    // JSON
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("result", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("heartbeat_actions_by_run").on("heartbeat_actions").columns(["run_id", "id"]).execute();
  await db.schema.createIndex("heartbeat_actions_by_owner").on("heartbeat_actions").columns(["owner_id", "type", "created_at"]).execute();

  await db.schema.alterTable("agent_messages").addColumn("read_at", "text").execute();
  await sql`update agent_messages set read_at = created_at`.execute(db);
}
