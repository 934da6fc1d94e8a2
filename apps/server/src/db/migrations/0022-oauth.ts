import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Sign-in and the OAuth 2.1 authorization server.
 *
 * - `users.password_hash`: scrypt of the account's password (`scrypt$N$r$p$salt$hash`); null: the
 *   account cannot sign in to a browser page (API keys still work).
 * - `web_sessions`: a signed-in browser, by the SHA-256 of its cookie; `csrf` is the token its
 *   forms must echo.
 * - `oauth_models`: oidc-provider's storage, one row per (model, id) with its payload as JSON and
 *   the columns it looks things up by (grant, session uid, user code); `expires_at` in epoch ms.
 * - `oauth_secrets`: the provider's signing keys and cookie keys, sealed with the server secret, so
 *   every instance sharing the database signs and verifies with the same keys.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  await db.schema.alterTable("users").addColumn("password_hash", "text").execute();

  await db.schema
    .createTable("web_sessions")
    .addColumn("id_hash", "text", (c) => c.primaryKey())
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("csrf", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("web_sessions_by_user").on("web_sessions").column("user_id").execute();

  await db.schema
    .createTable("oauth_models")
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("grant_id", "text")
    .addColumn("uid", "text")
    .addColumn("user_code", "text")
    .addColumn("account_id", "text")
    .addColumn("client_id", "text")
    .addColumn("consumed_at", "bigint")
    .addColumn("expires_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_used_at", "bigint")
    .addPrimaryKeyConstraint("oauth_models_pk", ["model", "id"])
    .execute();
  await db.schema.createIndex("oauth_models_by_grant").on("oauth_models").column("grant_id").execute();
  await db.schema.createIndex("oauth_models_by_uid").on("oauth_models").columns(["model", "uid"]).execute();
  await db.schema.createIndex("oauth_models_by_user_code").on("oauth_models").columns(["model", "user_code"]).execute();
  await db.schema.createIndex("oauth_models_by_account").on("oauth_models").columns(["model", "account_id"]).execute();
  await db.schema.createIndex("oauth_models_by_expiry").on("oauth_models").column("expires_at").execute();

  await db.schema
    .createTable("oauth_secrets")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("sealed", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
}
