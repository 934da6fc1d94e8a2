import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * One row per model call the agent layer makes: whose it was, through which key, what for, on which
 * provider and model, and the tokens it took. `api_key_id` has no foreign key: a row outlives the
 * key it was made under (and calls the server makes by itself, such as heartbeats, have none).
 */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("model_usage")
    .$call(addIdColumn)
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("api_key_id", "text")
    .addColumn("purpose", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("prompt_tokens", "integer", (c) => c.notNull())
    .addColumn("completion_tokens", "integer", (c) => c.notNull())
    .addColumn("total_tokens", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  // Every read is one user's rows since a time (GET /agent/usage, monthly accounting).
  await db.schema.createIndex("model_usage_user_time").on("model_usage").columns(["user_id", "created_at"]).execute();
}
