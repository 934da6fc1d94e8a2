import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Remote tool servers (Tandem as an MCP client): one row per server a user added.
 *
 * - `oauth_client`, `oauth_tokens`, `oauth_verifier`: the dynamic client registration, the tokens
 *   and the pending PKCE verifier, each sealed with the server's SecretBox (never in the clear).
 * - `oauth_state_hash`: the SHA-256 of the pending authorization's `state` (single use, expiring at
 *   `oauth_state_expires_at`); the callback finds the row, and so the user and server, by it.
 * - `tools`: the cached tool list (JSON), read on connect and by `refresh`.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  await db.schema
    .createTable("mcp_servers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("server_url", "text", (c) => c.notNull())
    .addColumn("config", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("tools", "text", (c) => c.notNull())
    .addColumn("oauth_client", "text")
    .addColumn("oauth_tokens", "text")
    .addColumn("oauth_verifier", "text")
    .addColumn("oauth_state_hash", "text")
    .addColumn("oauth_state_expires_at", "text")
    .addColumn("last_checked_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addUniqueConstraint("mcp_servers_owner_name", ["owner_id", "name"])
    .execute();
  await db.schema.createIndex("mcp_servers_by_state").on("mcp_servers").column("oauth_state_hash").execute();
}
