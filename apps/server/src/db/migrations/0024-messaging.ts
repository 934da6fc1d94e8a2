import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * Agent messaging (issue 16): conversations shared between people, groups, at-most-once posting,
 * `Idempotency-Key` replays, and a durable per-user event log for the inbox's live channel.
 *
 * - `agent_conversations.pair_key` (`<lower id>:<higher id>`) makes the `shared_agent`
 *   conversation of two people unique: one stable conversation per pair.
 * - `conversation_members`: who is in a shared or group conversation (the personal agent's
 *   `agent` conversations have only their owner and no rows here). `left_at` set: a former
 *   member, who no longer reads or posts. `last_read_id`: read state per member.
 * - `agent_messages.client_message_id`: the sender's id for at-most-once group posts, unique per
 *   conversation; `intent`: what a message says it is for (`inform`, `query`…), echoed to readers.
 * - `message_idempotency`: the first answer to an `Idempotency-Key`, per user, replayed for five
 *   minutes; `response` null while the first request is still running.
 * - `user_events` / `user_event_cursors`: the user-level realtime log (`GET /agent/stream`), with
 *   the same cursor semantics as the bridges' endpoint log.
 */
export async function up(db: Kysely<unknown>, _context: MigrationContext): Promise<void> {
  await db.schema.alterTable("agent_conversations").addColumn("pair_key", "text").execute();
  await db.schema.createIndex("agent_conversations_by_pair").on("agent_conversations").column("pair_key").unique().execute();

  await db.schema
    .createTable("conversation_members")
    .addColumn("conversation_id", "bigint", (c) => c.notNull().references("agent_conversations.id").onDelete("cascade"))
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    // admin | member
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("joined_at", "text", (c) => c.notNull())
    .addColumn("left_at", "text")
    .addColumn("last_read_id", "bigint", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("conversation_members_pk", ["conversation_id", "user_id"])
    .execute();
  await db.schema.createIndex("conversation_members_by_user").on("conversation_members").columns(["user_id", "conversation_id"]).execute();

  await db.schema.alterTable("agent_messages").addColumn("client_message_id", "text").execute();
  await db.schema.alterTable("agent_messages").addColumn("intent", "text").execute();
  await db.schema
    .createIndex("agent_messages_by_client_id")
    .on("agent_messages")
    .columns(["conversation_id", "client_message_id"])
    .unique()
    .execute();

  await db.schema
    .createTable("message_idempotency")
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("key", "text", (c) => c.notNull())
    // sha256 of the request body, hex: the same key with another body is refused
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("response", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("message_idempotency_pk", ["user_id", "key"])
    .execute();
  await db.schema.createIndex("message_idempotency_by_time").on("message_idempotency").column("created_at").execute();

  await db.schema
    .createTable("user_event_cursors")
    .addColumn("user_id", "bigint", (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    .addColumn("cursor", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable("user_events")
    .addColumn("user_id", "bigint", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("cursor", "bigint", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_events_pk", ["user_id", "cursor"])
    .execute();
  await db.schema.createIndex("user_events_by_time").on("user_events").column("created_at").execute();
}
