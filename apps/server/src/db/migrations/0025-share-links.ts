import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Share links and their guests.
 *
 * - `share_links`: a link to the owner's agent (or one note) with the capabilities it gives. The
 *   token is a bearer secret: it is found by its SHA-256 hash (`token_hash`) and kept for the
 *   owner's listing only sealed (`token_sealed`, AES-GCM under the server's key). A link is live
 *   while `revoked_at` is null and `expires_at` (null: never) is in the future.
 * - `guest_sessions`: one conversation of a visitor on a link; `session_id` is its public name
 *   (listings), `session_key_hash` the hash of the `gsk_…` secret the visitor continues it with.
 * - `guest_messages`: the transcript. A guest message on a link answered by the owner's machine
 *   carries `local_state` (`pending` until the bridge replies or the wait runs out).
 */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  await db.schema
    .createTable("share_links")
    .$call(addIdColumn)
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("token_sealed", "text", (c) => c.notNull())
    .addColumn("target", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    // JSON array of folder ids (scope `folders`)
    .addColumn("folder_ids", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("note_id", "bigint")
    .addColumn("access", "text", (c) => c.notNull())
    .addColumn("notes_access", "text", (c) => c.notNull())
    .addColumn("label", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("require_sign_in", "integer", (c) => c.notNull())
    .addColumn("email", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("todos", "integer", (c) => c.notNull().defaultTo(0))
    // JSON array of tool names
    .addColumn("tools", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("identity", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("local_agent", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("expires_at", "text")
    .addColumn("revoked_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("share_links_by_owner").on("share_links").columns(["owner_id", "created_at"]).execute();

  await db.schema
    .createTable("guest_sessions")
    .$call(addIdColumn)
    .addColumn("session_id", "text", (c) => c.notNull().unique())
    .addColumn("session_key_hash", "text", (c) => c.notNull().unique())
    .addColumn("link_id", "bigint", (c) => c.notNull().references("share_links.id").onDelete("cascade"))
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("visitor_user_id", "bigint", (c) => c.references("users.id").onDelete("set null"))
    .addColumn("visitor_name", "text")
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("message_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("last_active_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("guest_sessions_by_link").on("guest_sessions").columns(["link_id", "last_active_at"]).execute();
  await db.schema.createIndex("guest_sessions_by_owner").on("guest_sessions").columns(["owner_id", "last_active_at"]).execute();

  await db.schema
    .createTable("guest_messages")
    .$call(addIdColumn)
    .addColumn("session_id", "bigint", (c) => c.notNull().references("guest_sessions.id").onDelete("cascade"))
    .addColumn("owner_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    // server | local (who answered, on assistant rows)
    .addColumn("answered_by", "text")
    // pending | answered | expired (guest rows on links answered by the owner's machine)
    .addColumn("local_state", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("guest_messages_by_session").on("guest_messages").columns(["session_id", "id"]).execute();
  await db.schema.createIndex("guest_messages_pending").on("guest_messages").columns(["owner_id", "local_state"]).execute();
}
