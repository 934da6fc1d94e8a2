import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Managed agents (docs/managed-agents.md).
 *
 * - `managed_agents`: a server-hosted agent of one owner. `handle` is unique among agents here and
 *   kept apart from usernames by the services (each refuses the other's names). `agent_grant` and
 *   `tool_policy` are JSON; `namespaces` a JSON array of tool namespaces.
 * - `api_keys.agent_id`: a key whose principal is the agent, not its owner (`svc_sk_…` like every
 *   key, verified by the same verifier); null for a person's own keys.
 * - `managed_agent_runs`: each run of an agent, however it was reached (its runs route, an agent
 *   message, A2A): status, tools used, tokens, input and output text.
 * Times are ISO 8601 (UTC), compared as text.
 */
export async function up(db: Kysely<unknown>, context: MigrationContext): Promise<void> {
  await context
    .addIdColumn(db.schema.createTable("managed_agents"))
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("handle", "text", (c) => c.notNull().unique())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("instructions", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("namespaces", "text", (c) => c.notNull())
    .addColumn("agent_grant", "text", (c) => c.notNull())
    .addColumn("tool_policy", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("managed_agents_by_owner").on("managed_agents").column("owner_id").execute();

  await db.schema
    .alterTable("api_keys")
    .addColumn("agent_id", "bigint", (c) => c.references("managed_agents.id").onDelete("cascade"))
    .execute();
  await db.schema.createIndex("api_keys_by_agent").on("api_keys").column("agent_id").execute();

  await context
    .addIdColumn(db.schema.createTable("managed_agent_runs"))
    .addColumn("agent_id", "bigint", (c) => c.notNull().references("managed_agents.id").onDelete("cascade"))
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("caller_user_id", "bigint")
    .addColumn("api_key_id", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("input", "text", (c) => c.notNull())
    .addColumn("output", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("tools_used", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("prompt_tokens", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("completion_tokens", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("error", "text")
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("finished_at", "text")
    .execute();
  await db.schema.createIndex("managed_agent_runs_by_agent").on("managed_agent_runs").columns(["agent_id", "id"]).execute();
}
