import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * The tool registry over HTTP.
 *
 * - `disabled_tool_namespaces`: the namespaces a user switched off (a row per disabled one; no
 *   row: enabled, so a namespace added later starts enabled).
 * - `tool_calls`: one row per tool call through `POST /tools`, for the usage figures of
 *   `GET /tools`; rows older than the usage window are pruned by maintenance.
 */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("disabled_tool_namespaces")
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("namespace", "text", (c) => c.notNull())
    .addColumn("disabled_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("disabled_tool_namespaces_pk", ["user_id", "namespace"])
    .execute();

  await db.schema
    .createTable("tool_calls")
    .$call(addIdColumn)
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    // namespace.tool
    .addColumn("tool", "text", (c) => c.notNull())
    .addColumn("ok", "integer", (c) => c.notNull())
    .addColumn("elapsed_ms", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("tool_calls_by_owner").on("tool_calls").columns(["owner_id", "created_at"]).execute();
  await db.schema.createIndex("tool_calls_by_time").on("tool_calls").column("created_at").execute();
}
