import type { Kysely } from "kysely";
import type { MigrationContext } from "./migration-context";

/**
 * The delegation layer: the handshake (contacts and per-contact permissions), runtime endpoints
 * and sessions, device-code pairing, grants, messages with their delivery state, credits, tool
 * approvals and policies, collaborations, the per-endpoint realtime log and the audit log.
 * Runtime ids are opaque text (`ep_…`, `cs_…`, `msg_…`); ids only the server uses are integers.
 */
export async function up(db: Kysely<unknown>, { addIdColumn }: MigrationContext): Promise<void> {
  const user = "bigint" as const;

  await db.schema
    .createTable("contact_requests")
    .$call(addIdColumn)
    .addColumn("from_user_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("to_user_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("resolved_at", "text")
    .execute();
  await db.schema.createIndex("contact_requests_to").on("contact_requests").columns(["to_user_id", "status"]).execute();
  await db.schema.createIndex("contact_requests_from").on("contact_requests").columns(["from_user_id", "status"]).execute();

  // Friendship is symmetric: one row per direction, written together.
  await db.schema
    .createTable("contacts")
    .addColumn("user_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("contact_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("contacts_pk", ["user_id", "contact_id"])
    .execute();

  // What grantor's agent space grantee's agent may reach; its existence is the agent permission.
  await db.schema
    .createTable("contact_permissions")
    .addColumn("grantor_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("grantee_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("permissions", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("contact_permissions_pk", ["grantor_id", "grantee_id"])
    .execute();
  await db.schema.createIndex("contact_permissions_grantee").on("contact_permissions").column("grantee_id").execute();

  await db.schema
    .createTable("runtime_endpoints")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("runtime", "text", (c) => c.notNull())
    .addColumn("bridge_version", "text")
    .addColumn("adapter_version", "text")
    .addColumn("capabilities", "text", (c) => c.notNull())
    .addColumn("label", "text")
    .addColumn("token_id", "text", (c) => c.notNull().unique())
    .addColumn("token_hash", "text", (c) => c.notNull())
    // The last cursor handed out in this endpoint's realtime log; appenders lock this row.
    .addColumn("event_cursor", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("last_seen_at", "text")
    .addColumn("revoked_at", "text")
    .execute();
  await db.schema.createIndex("runtime_endpoints_device").on("runtime_endpoints").columns(["owner_id", "device_id"]).unique().execute();

  await db.schema
    .createTable("runtime_sessions")
    .addColumn("handle", "text", (c) => c.primaryKey())
    .addColumn("endpoint_id", "text", (c) => c.notNull().references("runtime_endpoints.id").onDelete("cascade"))
    .addColumn("owner_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("label", "text")
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("delivery_mode", "text", (c) => c.notNull())
    .addColumn("capabilities", "text", (c) => c.notNull())
    .addColumn("allow_inbound", "integer", (c) => c.notNull())
    .addColumn("allow_mid_turn_steer", "integer", (c) => c.notNull())
    .addColumn("workspace_boundary", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("runtime_sessions_endpoint").on("runtime_sessions").column("endpoint_id").execute();

  await db.schema
    .createTable("default_routes")
    .addColumn("owner_id", user, (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    .addColumn("endpoint_id", "text", (c) => c.notNull())
    .addColumn("session_handle", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("device_pairings")
    .$call(addIdColumn)
    .addColumn("user_code", "text", (c) => c.notNull().unique())
    .addColumn("poll_token_hash", "text", (c) => c.notNull().unique())
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("runtime", "text", (c) => c.notNull())
    .addColumn("bridge_version", "text")
    .addColumn("adapter_version", "text")
    .addColumn("capabilities", "text", (c) => c.notNull())
    .addColumn("label", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("user_id", user, (c) => c.references("users.id").onDelete("cascade"))
    .addColumn("endpoint_id", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("resolved_at", "text")
    .execute();

  await db.schema
    .createTable("grants")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("requester_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("requester_device_id", "text")
    .addColumn("requester_reply_endpoint_id", "text")
    .addColumn("requester_reply_session_handle", "text")
    .addColumn("recipient_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("target_kind", "text", (c) => c.notNull())
    .addColumn("target_offer_id", "text")
    .addColumn("frozen_endpoint_id", "text")
    .addColumn("frozen_session_handle", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("requested_ttl_minutes", "integer", (c) => c.notNull())
    .addColumn("requested_at", "text", (c) => c.notNull())
    .addColumn("request_expires_at", "text", (c) => c.notNull())
    .addColumn("activated_at", "text")
    .addColumn("grant_expires_at", "text")
    .addColumn("revoked_at", "text")
    .addColumn("ended_at", "text")
    // Messages on a grant are numbered; the counter lives here so numbering needs no scan.
    .addColumn("message_sequence", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("grants_requester").on("grants").columns(["requester_id", "status"]).execute();
  await db.schema.createIndex("grants_recipient").on("grants").columns(["recipient_id", "status"]).execute();

  // A message and its delivery: exactly one delivery per message, so one row holds both.
  await db.schema
    .createTable("messages")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("delivery_id", "text", (c) => c.notNull().unique())
    .addColumn("grant_id", "text", (c) => c.notNull().references("grants.id").onDelete("cascade"))
    .addColumn("sender_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("sender_device_id", "text")
    .addColumn("recipient_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("target_endpoint_id", "text", (c) => c.notNull())
    .addColumn("target_session_handle", "text", (c) => c.notNull())
    .addColumn("client_message_id", "text", (c) => c.notNull())
    // SHA-256 of the canonical request, to tell a retry from a conflicting reuse of the id.
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("reply_to", "text")
    .addColumn("correlation_id", "text")
    .addColumn("sequence", "bigint", (c) => c.notNull())
    .addColumn("credit_reserved", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("queued_at", "text", (c) => c.notNull())
    .addColumn("dispatched_at", "text")
    .addColumn("device_ack_received_at", "text")
    .addColumn("runtime_pending_at", "text")
    .addColumn("runtime_ack_received_at", "text")
    .addColumn("terminal_at", "text")
    .addColumn("result_code", "text")
    .addColumn("runtime_ack_id", "text")
    .execute();
  await db.schema
    .createIndex("messages_client_id")
    .on("messages")
    .columns(["grant_id", "sender_id", "client_message_id"])
    .unique()
    .execute();
  await db.schema.createIndex("messages_grant_status").on("messages").columns(["grant_id", "status"]).execute();

  await db.schema
    .createTable("delivery_attempts")
    .$call(addIdColumn)
    .addColumn("message_id", "text", (c) => c.notNull().references("messages.id").onDelete("cascade"))
    .addColumn("attempt_id", "text", (c) => c.notNull())
    .addColumn("phase", "text", (c) => c.notNull())
    .addColumn("result_code", "text")
    .addColumn("retryable", "integer")
    .addColumn("runtime_ack_id", "text")
    .addColumn("usage", "text")
    .addColumn("recorded", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("delivery_attempts_unique")
    .on("delivery_attempts")
    .columns(["message_id", "attempt_id", "phase"])
    .unique()
    .execute();

  await db.schema
    .createTable("credits")
    .addColumn("user_id", user, (c) => c.primaryKey().references("users.id").onDelete("cascade"))
    .addColumn("balance", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("tool_policies")
    .$call(addIdColumn)
    .addColumn("owner_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    // An exact tool name, or `*` for every tool.
    .addColumn("tool_name", "text", (c) => c.notNull())
    // Null: every grant (and every peer, unless peer_id narrows it).
    .addColumn("grant_id", "text")
    .addColumn("peer_id", user)
    .addColumn("session_handle", "text")
    .addColumn("decision", "text", (c) => c.notNull())
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text")
    .execute();
  await db.schema.createIndex("tool_policies_owner").on("tool_policies").columns(["owner_id", "tool_name"]).execute();

  await db.schema
    .createTable("tool_approvals")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("endpoint_id", "text", (c) => c.notNull())
    .addColumn("grant_id", "text", (c) => c.notNull())
    .addColumn("session_handle", "text")
    .addColumn("message_id", "text")
    .addColumn("tool_name", "text", (c) => c.notNull())
    .addColumn("tool_input_summary", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("decision", "text")
    .addColumn("scope", "text")
    .addColumn("policy_id", "bigint")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("resolved_at", "text")
    .execute();
  await db.schema.createIndex("tool_approvals_owner").on("tool_approvals").columns(["owner_id", "status"]).execute();

  await db.schema
    .createTable("collaborations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("requester_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("requester_endpoint_id", "text", (c) => c.notNull())
    .addColumn("requester_session_handle", "text", (c) => c.notNull())
    .addColumn("target_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("client_message_id", "text", (c) => c.notNull())
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("task", "text", (c) => c.notNull())
    .addColumn("context", "text")
    .addColumn("requested_ttl_minutes", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("answer", "text")
    .addColumn("grant_id", "text")
    .addColumn("message_id", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .addColumn("resolved_at", "text")
    .execute();
  await db.schema
    .createIndex("collaborations_client_id")
    .on("collaborations")
    .columns(["requester_id", "client_message_id"])
    .unique()
    .execute();
  await db.schema.createIndex("collaborations_target").on("collaborations").columns(["target_id", "status"]).execute();

  // "Always allow": the owner lets this requester delegate without asking each time.
  await db.schema
    .createTable("collaboration_allowances")
    .addColumn("owner_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("requester_id", user, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("collaboration_allowances_pk", ["owner_id", "requester_id"])
    .execute();

  await db.schema
    .createTable("realtime_events")
    .addColumn("endpoint_id", "text", (c) => c.notNull())
    .addColumn("cursor", "bigint", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("data", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("realtime_events_pk", ["endpoint_id", "cursor"])
    .execute();

  await db.schema
    .createTable("audit_log")
    .$call(addIdColumn)
    .addColumn("actor_id", user)
    // `api_key:<id>`, `device:<endpointId>`, `pairing` or `system` (timers).
    .addColumn("actor_credential", "text", (c) => c.notNull())
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("object_type", "text", (c) => c.notNull())
    .addColumn("object_id", "text", (c) => c.notNull())
    // The (at most two) people the change concerns; each may read the entry.
    .addColumn("party_a", user)
    .addColumn("party_b", user)
    .addColumn("detail", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("audit_log_party_a").on("audit_log").columns(["party_a", "id"]).execute();
  await db.schema.createIndex("audit_log_party_b").on("audit_log").columns(["party_b", "id"]).execute();
}
