import type { ColumnType, Generated } from "kysely";

/**
 * Tables as Kysely sees them. Timestamps are ISO 8601 strings (they sort correctly as text and
 * read the same from SQLite and PostgreSQL); flags are nullable timestamps, never booleans,
 * because the two dialects disagree on how booleans come back.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  name: string | null;
  email: string | null;
  created_at: string;
  /** scrypt of the password (`scrypt$N$r$p$salt$hash`); null: no browser sign-in. */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ApiKeysTable {
  /** The public part of the key, shown by `keys create`, used by `keys revoke`. */
  id: string;
  user_id: number;
  /** SHA-256 of the secret part, hex. */
  secret_hash: string;
  label: string | null;
  /** JSON array of scope strings. */
  scopes: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Set on a managed agent's key: its principal is that agent (`managed_agents.id`), not the user. */
  agent_id: Generated<number | null>;
}

export interface FoldersTable {
  id: Generated<number>;
  /** Stable identity for the folder inside its owner's workspace document; unique per owner. */
  uuid: string;
  owner_id: number;
  parent_id: number | null;
  /** parent_id, or 0 for the root: lets one unique index cover root folders too. */
  parent_key: number;
  name: string;
  /** Case- and normalisation-folded name, for lookups by name; siblings may share one (offline clients). */
  name_key: string;
  icon: string | null;
  created_at: string;
  updated_at: string;
}

/** Yjs documents by name, each as one merged update (its full state). */
export interface DocumentsTable {
  name: string;
  state: Uint8Array;
  updated_at: string;
  /** Counts stores of this document. */
  version: Generated<number>;
  /** The stored version the SQL views were last computed from; behind `version` after a crash. */
  views_version: Generated<number>;
}

/** The user whose workspace first listed a note: its owner for good, whatever other workspaces list. */
export interface NoteOwnersTable {
  uuid: string;
  owner_id: number;
}

/** One row (id 1): bumped whenever access may have been taken away, so every instance re-checks open sync connections. */
export interface SyncAccessEpochTable {
  id: number;
  epoch: number;
}

/** A running server instance's lease (migration 0033). */
export interface ServerInstancesTable {
  id: string;
  host: string;
  pid: number;
  pid_space: string;
  redis_prefix: string | null;
  started_at: string;
  renewed_at: string;
  expires_at: string;
}

export interface NotesTable {
  id: Generated<number>;
  uuid: string;
  owner_id: number;
  folder_id: number | null;
  title: string;
  /** 0 or 1. */
  pinned: number;
  /** JSON array of strings. */
  tags: string;
  created_at: string;
  updated_at: string;
}

export interface NoteBodiesTable {
  uuid: string;
  /** The note's title, copied from the workspace view so one row holds everything search indexes. */
  title: Generated<string>;
  text: string;
  /** The note's heading lines, newline-separated, in order: indexed with more weight than the text. */
  headings: Generated<string>;
  word_count: number;
  size_bytes: number;
  updated_at: string;
}

/** A note's embedding under one model (search/embeddings.ts), and what it was computed from. */
export interface NoteEmbeddingsTable {
  uuid: string;
  model: string;
  title: string;
  body_updated_at: string;
  /** SHA-256 of the embedded input: a recomputed view with the same text keeps its vector. */
  digest: string;
  dimensions: number;
  /** Float32, little-endian, unit length. */
  vector: Uint8Array;
}

export interface SnapshotsTable {
  /** The legacy `versionId`. */
  id: Generated<number>;
  note_uuid: string;
  owner_id: number;
  /** 1, 2, 3… per note: the preferred way to address a snapshot. */
  seq: number;
  label: string | null;
  /** The note document's full state when the snapshot was taken. */
  state: Uint8Array;
  word_count: number;
  created_at: string;
  /** 1 for the server's own (before an update or a restore): thinned out with age; 0 for a person's. */
  automatic: Generated<number>;
}

export interface FolderSharesTable {
  folder_uuid: string;
  owner_id: number;
  grantee_id: number;
  role: "viewer" | "editor";
  created_at: string;
}

export interface TodosTable {
  id: Generated<number>;
  uuid: string;
  owner_id: number;
  title: string;
  description: string;
  search_text: string;
  /** YYYY-MM-DD */
  due_date: string | null;
  priority: number | null;
  /** 0 or 1. */
  completed: number;
  completed_at: string | null;
  /** JSON array of {title, completed}. */
  steps: string;
  created_at: string;
  updated_at: string;
}

export type ContactRequestType = "friend" | "agent";
export type ContactRequestStatus = "pending" | "accepted" | "declined" | "withdrawn";

/** The one row (id 1) of the server's team; `seats` null: the configured default. */
export interface TeamSettingsTable {
  id: number;
  name: string;
  seats: number | null;
  updated_at: string;
}

export type TeamRoleValue = "owner" | "admin" | "member";

export interface TeamMembersTable {
  user_id: number;
  role: TeamRoleValue;
  invited_by: number | null;
  joined_at: string;
}

/** A single-use invite; only a hash of its secret is stored. */
export interface TeamInvitesTable {
  /** The public id: the 12 characters after `svc_inv_`. */
  id: string;
  secret_hash: string;
  role: "admin" | "member";
  /** Lower-cased; only the account with this email may accept. */
  email: string | null;
  invited_by: number;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: number | null;
  revoked_at: string | null;
}

export interface ContactRequestsTable {
  id: Generated<number>;
  from_user_id: number;
  to_user_id: number;
  type: ContactRequestType;
  status: ContactRequestStatus;
  created_at: string;
  resolved_at: string | null;
}

/** Friendship; written in both directions at once. */
export interface ContactsTable {
  user_id: number;
  contact_id: number;
  created_at: string;
  /** The share link redeemed to make these contacts (bounded by it, ending with it); null: the handshake. */
  share_link_id: number | null;
}

/** The agent permission from grantor to grantee: what grantee's agent may reach of grantor's. */
export interface ContactPermissionsTable {
  grantor_id: number;
  grantee_id: number;
  /** JSON object: capability → level, e.g. {"notesAccess": {"scope": "all", "access": "read"}}. */
  permissions: string;
  created_at: string;
  updated_at: string;
  /**
   * The share link this permission was born of (`POST /network/connect`): it reaches no more than
   * the link's guests and ends with the link. Null: the grantor's own decision (the handshake).
   */
  share_link_id: number | null;
}

export interface RuntimeEndpointsTable {
  /** `ep_…` */
  id: string;
  owner_id: number;
  device_id: string;
  runtime: "claude-code" | "codex";
  bridge_version: string | null;
  adapter_version: string | null;
  /** JSON: the array or object the bridge sent. */
  capabilities: string;
  label: string | null;
  /** Public id of the current device token (`svc_dev_<token_id><secret>`). */
  token_id: string;
  /** SHA-256 of the token's secret part, hex. */
  token_hash: string;
  event_cursor: Generated<number>;
  created_at: string;
  updated_at: string;
  last_seen_at: string | null;
  revoked_at: string | null;
}

export type SessionState = "idle" | "busy" | "closed";

export interface RuntimeSessionsTable {
  handle: string;
  endpoint_id: string;
  owner_id: number;
  label: string | null;
  state: SessionState;
  delivery_mode: string;
  capabilities: string;
  /** 0 or 1. */
  allow_inbound: number;
  /** 0 or 1. */
  allow_mid_turn_steer: number;
  workspace_boundary: string | null;
  created_at: string;
  updated_at: string;
}

export interface DefaultRoutesTable {
  owner_id: number;
  endpoint_id: string;
  session_handle: string;
  updated_at: string;
}

export type PairingStatus = "pending" | "approved" | "denied" | "consumed";

/** `bridge`: the device gets a device token for a runtime endpoint; `sign_in`: an app gets an API key. */
export type PairingPurpose = "bridge" | "sign_in";

export interface DevicePairingsTable {
  id: Generated<number>;
  user_code: string;
  poll_token_hash: string;
  device_id: string;
  runtime: "claude-code" | "codex";
  bridge_version: string | null;
  adapter_version: string | null;
  capabilities: string;
  label: string | null;
  status: PairingStatus;
  purpose: Generated<PairingPurpose>;
  /** The owner who approved or denied. */
  user_id: number | null;
  endpoint_id: string | null;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
  /** Where the start request came from (client address, User-Agent), shown on the approval page. */
  requester_address: string | null;
  requester_agent: string | null;
}

export type GrantStatus = "pending" | "active" | "declined" | "revoked" | "expired";

export interface GrantsTable {
  /** `cs_…`, the communication session id. */
  id: string;
  requester_id: number;
  requester_device_id: string | null;
  requester_reply_endpoint_id: string | null;
  requester_reply_session_handle: string | null;
  recipient_id: number;
  target_kind: string;
  target_offer_id: string | null;
  frozen_endpoint_id: string | null;
  frozen_session_handle: string | null;
  status: GrantStatus;
  requested_ttl_minutes: number;
  requested_at: string;
  request_expires_at: string;
  activated_at: string | null;
  grant_expires_at: string | null;
  revoked_at: string | null;
  ended_at: string | null;
  message_sequence: Generated<number>;
}

export type MessageKind = "text" | "task_invite" | "resource_request";

export type DeliveryStatus =
  | "queued"
  | "dispatched"
  | "device_acked"
  | "runtime_pending"
  | "runtime_acked"
  | "replied"
  | "failed"
  | "expired"
  | "revoked";

/** A message and its one delivery. */
export interface MessagesTable {
  /** `msg_…` */
  id: string;
  /** `dlv_…` */
  delivery_id: string;
  grant_id: string;
  sender_id: number;
  sender_device_id: string | null;
  recipient_id: number;
  target_endpoint_id: string;
  target_session_handle: string;
  client_message_id: string;
  request_hash: string;
  kind: MessageKind;
  /** JSON. */
  payload: string;
  reply_to: string | null;
  correlation_id: string | null;
  sequence: number;
  /** 1 when a task_invite took a credit. */
  credit_reserved: Generated<number>;
  created_at: string;
  expires_at: string;
  status: DeliveryStatus;
  queued_at: string;
  dispatched_at: string | null;
  device_ack_received_at: string | null;
  runtime_pending_at: string | null;
  runtime_ack_received_at: string | null;
  terminal_at: string | null;
  result_code: string | null;
  runtime_ack_id: string | null;
}

export type AckPhase = "device_ack" | "runtime_pending" | "runtime_ack" | "runtime_failed";

export interface DeliveryAttemptsTable {
  id: Generated<number>;
  message_id: string;
  attempt_id: string;
  phase: AckPhase;
  result_code: string | null;
  retryable: number | null;
  runtime_ack_id: string | null;
  /** JSON {model, inputTokens, outputTokens}. */
  usage: string | null;
  recorded: "state" | "audit_only";
  created_at: string;
}

export interface CreditsTable {
  user_id: number;
  balance: number;
  updated_at: string;
  /** Null: set by an operator. Else the month (`2026-11`, UTC) of the allowance this balance is left of. */
  allowance_period: string | null;
}

export interface ToolPoliciesTable {
  id: Generated<number>;
  owner_id: number;
  /** Exact tool name or `*`. */
  tool_name: string;
  grant_id: string | null;
  peer_id: number | null;
  session_handle: string | null;
  decision: "allow";
  /** `owner` (made through the policy routes) or `session_decision` (an allow with scope session). */
  source: "owner" | "session_decision";
  created_at: string;
  expires_at: string | null;
}

export type ApprovalStatus = "auto_allow" | "pending" | "allowed" | "denied" | "expired";

export interface ToolApprovalsTable {
  /** `apr_…` */
  id: string;
  /** The owner of the endpoint whose runtime wants the tool. */
  owner_id: number;
  endpoint_id: string;
  grant_id: string;
  session_handle: string | null;
  message_id: string | null;
  tool_name: string;
  tool_input_summary: string;
  status: ApprovalStatus;
  decision: "allow" | "deny" | null;
  scope: "once" | "session" | null;
  policy_id: number | null;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
}

export type CollaborationStatus = "requested" | "accepted" | "declined" | "delegated" | "expired";

export interface CollaborationsTable {
  /** `col_…` */
  id: string;
  requester_id: number;
  requester_endpoint_id: string;
  requester_session_handle: string;
  target_id: number;
  client_message_id: string;
  task: string;
  /** JSON object or null. */
  context: string | null;
  /** The client's conversation id the task invite carries (the collaboration id when none was given); null in rows from before it was kept. */
  correlation_id: string | null;
  requested_ttl_minutes: number;
  status: CollaborationStatus;
  /** The owner's answer: `once` or `always`. */
  answer: "once" | "always" | null;
  grant_id: string | null;
  message_id: string | null;
  created_at: string;
  expires_at: string;
  resolved_at: string | null;
}

export interface CollaborationAllowancesTable {
  owner_id: number;
  requester_id: number;
  created_at: string;
}

export interface RealtimeEventsTable {
  endpoint_id: string;
  cursor: number;
  type: string;
  /** JSON. */
  data: string;
  created_at: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  actor_id: number | null;
  actor_credential: string;
  action: string;
  object_type: string;
  object_id: string;
  party_a: number | null;
  party_b: number | null;
  /** JSON or null. */
  detail: string | null;
  created_at: string;
}

/** `agent`: the owner's personal agent (view `me`). Messaging and sharing add more kinds. */
export type ConversationKind = "agent" | "shared_agent" | "group";

export interface AgentConversationsTable {
  id: Generated<number>;
  owner_id: number;
  kind: ConversationKind;
  title: string;
  created_at: string;
  updated_at: string;
  /** `shared_agent` only: `<lower user id>:<higher user id>`, unique (one conversation per pair). */
  pair_key: Generated<string | null>;
}

/** A person in a shared or group conversation; `left_at` set: a former member. */
export interface ConversationMembersTable {
  conversation_id: number;
  user_id: number;
  role: "admin" | "member";
  joined_at: string;
  left_at: string | null;
  /** The newest message id this member has read. */
  last_read_id: Generated<number>;
}

/** The first answer to an `Idempotency-Key` of POST /agent/message; `response` null while it runs. */
export interface MessageIdempotencyTable {
  user_id: number;
  key: string;
  request_hash: string;
  status_code: number | null;
  response: string | null;
  created_at: string;
}

export interface UserEventCursorsTable {
  user_id: number;
  cursor: Generated<number>;
}

/** The user-level realtime log (GET /agent/stream): cursor increases per user. */
export interface UserEventsTable {
  user_id: number;
  cursor: number;
  type: string;
  /** JSON object. */
  data: string;
  created_at: string;
}

export interface AgentMessagesTable {
  id: Generated<number>;
  conversation_id: number;
  role: "user" | "assistant";
  sender_type: "human" | "agent";
  sender_id: string | null;
  sender_label: string;
  content: string;
  status: "complete" | "incomplete";
  /** JSON array of tool names. */
  tools_used: string;
  model: string | null;
  created_at: string;
  /** When the owner read it; null: unread (heartbeat messages arrive so). */
  read_at: string | null;
  /** The sender's id for at-most-once posting, unique per (conversation, sender). */
  client_message_id: Generated<string | null>;
  /** What the message says it is for (`inform`, `query`…); null for chat turns. */
  intent: Generated<string | null>;
  /** The message request holding it (migration 0032): its recipient sees it only once that request is accepted. */
  request_id: Generated<number | null>;
}

export type MessageRequestStatus = "pending" | "accepted" | "ignored" | "blocked";

/** Human-mode messages from someone the recipient is not connected with (migration 0032). */
export interface MessageRequestsTable {
  id: Generated<number>;
  sender_id: number;
  recipient_id: number;
  /** The pair's shared_agent conversation, where the held messages are stored. */
  conversation_id: number;
  status: MessageRequestStatus;
  /** When this request was opened: what the sender's daily limit counts. */
  opened_at: string;
  updated_at: string;
  resolved_at: string | null;
}

/** One model call of the agent layer and the tokens it took (migration 0017). */
export interface ModelUsageTable {
  id: Generated<number>;
  user_id: number;
  /** The API key the call was made under (`api_keys.id`); null for the server's own runs. */
  api_key_id: string | null;
  /** The managed agent and device the call was made for (0038). */
  agent_id: string | null;
  device_id: string | null;
  /** What the call was for: chat, briefing, summary, heartbeat… */
  purpose: string;
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  created_at: string;
}

/** A briefing as written; the summaries are HTML, `suggestions` JSON `[{suggestionId, title, description, action}]`. */
export interface BriefingsTable {
  id: Generated<number>;
  owner_id: number;
  api_key_id: string | null;
  time_duration: string;
  status_quo_summary: string;
  todo_summary: string;
  calendar_summary: string;
  notes_summary: string;
  email_attention_summary: string;
  suggestions: string;
  /** Tokens spent writing it (estimated for the local writer). */
  token_usage: number;
  generated_at: string;
}

export type HeartbeatTierColumn = "MESSAGES" | "ACTIONS";

/** A user's heartbeat policy and schedule (migration 0020); no row: the defaults. */
export interface HeartbeatPoliciesTable {
  user_id: number;
  tier: HeartbeatTierColumn;
  /** 0 or 1. */
  schedule_enabled: number;
  every_minutes: number;
  /** HH:MM in `timezone`; both null: no quiet hours. */
  quiet_start: string | null;
  quiet_end: string | null;
  timezone: string;
  /** When the next scheduled run is due; null while the schedule is off. */
  next_run_at: string | null;
  /** The heartbeat thread (an `agent` conversation), once one was created. */
  conversation_id: number | null;
  updated_at: string;
  /** Who last set the tier or schedule (migration 0029): `api_key` | `oauth`; null: not recorded. */
  set_by_kind: Generated<"api_key" | "oauth" | null>;
  /** The API key's id, or the OAuth grant's id. */
  set_by_id: Generated<string | null>;
  /** JSON array of the scopes that credential held then: scheduled runs never exceed them. */
  set_by_scopes: Generated<string | null>;
  /** JSON `{tool: "allow" | "ask" | "deny"}` for heartbeat runs (migration 0037); null: none. */
  tool_policy: Generated<string | null>;
}

export interface HeartbeatRunsTable {
  id: Generated<number>;
  owner_id: number;
  tier: HeartbeatTierColumn;
  source: "manual" | "schedule";
  status: "running" | "requires_action" | "completed" | "failed";
  /** 0 or 1. */
  dry_run: number;
  started_at: string;
  completed_at: string | null;
  model: string | null;
  text: Generated<string>;
  suppressed: Generated<number>;
  suppress_reason: string | null;
  delivered: Generated<number>;
  conversation_id: number | null;
  message_id: number | null;
  tool_calls: Generated<number>;
  actions_created: Generated<number>;
  elapsed_ms: number | null;
  error: string | null;
}

export interface HeartbeatActionsTable {
  id: Generated<number>;
  run_id: number;
  owner_id: number;
  /** The tool's name, or `send_message`. */
  type: string;
  mode: "message" | "action";
  status: "executed" | "skipped" | "failed";
  /** JSON. */
  payload: string;
  /** JSON. */
  result: string;
  created_at: string;
}

/** A tool namespace a user switched off (migration 0021); no row: enabled. */
export interface DisabledToolNamespacesTable {
  user_id: number;
  namespace: string;
  disabled_at: string;
}

/** One call through `POST /tools`, for the usage figures of `GET /tools` (migration 0021). */
export interface ToolCallsTable {
  id: Generated<number>;
  owner_id: number;
  /** namespace.tool */
  tool: string;
  /** 1: answered; 0: the tool failed (422). */
  ok: number;
  elapsed_ms: number;
  created_at: string;
}

/** A signed-in browser (migration 0022). */
export interface WebSessionsTable {
  /** SHA-256 of the cookie value, hex. */
  id_hash: string;
  user_id: number;
  /** The token the session's forms echo back (CSRF). */
  csrf: string;
  created_at: string;
  expires_at: string;
}

/** A fixed-window count of password sign-in attempts (migration 0028). */
export interface SignInCountsTable {
  /** `pair` (account and address) | `address` | `account`. */
  scope: "pair" | "address" | "account";
  key: string;
  count: number;
  window_started_at: string;
  /** The latest counted attempt, and the one before it. */
  last_at: string;
  previous_at: string | null;
}

/** An address an account signed in from successfully, and when last (migration 0028). */
export interface SignInAddressesTable {
  user_id: number;
  address: string;
  signed_in_at: string;
}

/** oidc-provider's storage: one row per model instance; times in epoch ms. */
export interface OAuthModelsTable {
  model: string;
  id: string;
  /** The provider's payload, JSON. */
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  account_id: string | null;
  client_id: string | null;
  consumed_at: ColumnType<number | null, number | null | undefined, number | null>;
  expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: ColumnType<number, number, number>;
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** The authorization server's keys, sealed with the server secret. */
export interface OAuthSecretsTable {
  name: string;
  sealed: string;
  created_at: string;
}

/** A remote tool server a user added (migration 0023). OAuth values are sealed (SecretBox), never clear. */
export interface McpServersTable {
  id: string;
  owner_id: number;
  /** The namespace its tools appear under; unique per owner. */
  name: string;
  server_url: string;
  /** JSON: `{transport, scope?}`. */
  config: string;
  status: "connected" | "needs_reauth" | "disconnected" | "error";
  error: string | null;
  /** JSON: the cached, vetted tool list. */
  tools: string;
  oauth_client: string | null;
  oauth_tokens: string | null;
  oauth_verifier: string | null;
  oauth_state_hash: string | null;
  oauth_state_expires_at: string | null;
  last_checked_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A webhook receiver of one owner (migration 0035). */
export interface WebhookEndpointsTable {
  id: string;
  owner_id: number;
  url: string;
  description: Generated<string>;
  /** JSON array of event types. */
  events: string;
  /** `whsec_…`, sealed with the SecretBox. */
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: string | null;
  status: "enabled" | "disabled";
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

/** The outbox: one event for one endpoint; `id` is the `webhook-id` header. */
export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  event_type: string;
  /** The exact JSON body sent (and signed) on every attempt. */
  payload: string;
  status: "pending" | "succeeded" | "failed";
  attempt_count: Generated<number>;
  next_attempt_at: string | null;
  lease_token: string | null;
  lease_expires_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  next_attempt_at: string | null;
}

export interface ManagedAgentsTable {
  id: Generated<number>;
  owner_id: number;
  handle: string;
  name: string;
  description: string;
  instructions: string;
  /** A model alias (or a configured model id). */
  model: string;
  /** JSON array of tool namespaces. */
  namespaces: string;
  /** JSON `{notesAccess, todoAccess}`. */
  agent_grant: string;
  /** JSON `{<tool>: allow|ask|deny}`. */
  tool_policy: string;
  status: "active" | "paused";
  created_at: string;
  updated_at: string;
}

export interface ManagedAgentRunsTable {
  id: Generated<number>;
  agent_id: number;
  owner_id: number;
  /** How it was reached: `runs` (its runs route), `agent_message`, `a2a`. */
  source: string;
  /** The person asking (null: the owner or the agent's own key). */
  caller_user_id: number | null;
  api_key_id: string | null;
  status: "running" | "requires_action" | "completed" | "failed" | "stopped";
  input: string;
  output: string;
  /** JSON array of tool names, in call order. */
  tools_used: string;
  prompt_tokens: number;
  completion_tokens: number;
  error: string | null;
  model: string;
  created_at: string;
  finished_at: string | null;
}

export type EscalationSourceType = "heartbeat" | "managed_agent" | "agent_rpc";

export interface PausedRunsTable {
  id: string;
  owner_id: number;
  source_type: EscalationSourceType;
  source_id: string;
  /** JSON: the source's own context, to rebuild the run. */
  context: string;
  /** JSON ModelMessage[]: the run so far. */
  messages: string;
  status: "waiting" | "resuming" | "done" | "failed";
  resume_started_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface EscalationsTable {
  id: string;
  owner_id: number;
  run_id: string;
  kind: "tool_call";
  source_type: EscalationSourceType;
  source_id: string;
  tool_name: string;
  tool_call_id: string;
  approval_id: string;
  summary: string;
  consequence: string;
  arguments: string;
  arguments_hash: string;
  status: "pending" | "continued" | "stopped" | "expired";
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decided_by: string | null;
  tool_state: "running" | "done" | null;
  tool_result: string | null;
}

export interface Schema {
  users: UsersTable;
  api_keys: ApiKeysTable;
  folders: FoldersTable;
  documents: DocumentsTable;
  notes: NotesTable;
  note_owners: NoteOwnersTable;
  sync_access_epoch: SyncAccessEpochTable;
  server_instances: ServerInstancesTable;
  note_bodies: NoteBodiesTable;
  note_embeddings: NoteEmbeddingsTable;
  snapshots: SnapshotsTable;
  folder_shares: FolderSharesTable;
  todos: TodosTable;
  contact_requests: ContactRequestsTable;
  contacts: ContactsTable;
  contact_permissions: ContactPermissionsTable;
  runtime_endpoints: RuntimeEndpointsTable;
  runtime_sessions: RuntimeSessionsTable;
  default_routes: DefaultRoutesTable;
  device_pairings: DevicePairingsTable;
  grants: GrantsTable;
  messages: MessagesTable;
  delivery_attempts: DeliveryAttemptsTable;
  credits: CreditsTable;
  tool_policies: ToolPoliciesTable;
  tool_approvals: ToolApprovalsTable;
  collaborations: CollaborationsTable;
  collaboration_allowances: CollaborationAllowancesTable;
  realtime_events: RealtimeEventsTable;
  audit_log: AuditLogTable;
  agent_conversations: AgentConversationsTable;
  agent_messages: AgentMessagesTable;
  conversation_members: ConversationMembersTable;
  message_requests: MessageRequestsTable;
  message_idempotency: MessageIdempotencyTable;
  user_event_cursors: UserEventCursorsTable;
  user_events: UserEventsTable;
  model_usage: ModelUsageTable;
  briefings: BriefingsTable;
  heartbeat_policies: HeartbeatPoliciesTable;
  heartbeat_runs: HeartbeatRunsTable;
  heartbeat_actions: HeartbeatActionsTable;
  disabled_tool_namespaces: DisabledToolNamespacesTable;
  tool_calls: ToolCallsTable;
  share_links: ShareLinksTable;
  guest_sessions: GuestSessionsTable;
  guest_messages: GuestMessagesTable;
  team_settings: TeamSettingsTable;
  team_members: TeamMembersTable;
  team_invites: TeamInvitesTable;
  web_sessions: WebSessionsTable;
  oauth_models: OAuthModelsTable;
  oauth_secrets: OAuthSecretsTable;
  mcp_servers: McpServersTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  managed_agents: ManagedAgentsTable;
  managed_agent_runs: ManagedAgentRunsTable;
  raw_memory_accounts: RawMemoryAccountsTable;
  raw_memory_devices: RawMemoryDevicesTable;
  raw_memory_keys: RawMemoryKeysTable;
  raw_memory_records: RawMemoryRecordsTable;
  paused_runs: PausedRunsTable;
  escalations: EscalationsTable;
  sign_in_counts: SignInCountsTable;
  sign_in_addresses: SignInAddressesTable;
  meter_counters: MeterCountersTable;
  meter_active_devices: MeterActiveDevicesTable;
  meter_budgets: MeterBudgetsTable;
  meter_notices: MeterNoticesTable;
}

/** Usage aggregated as recorded: one row per owner × period (month or day) × dimension (0038). */
export interface MeterCountersTable {
  owner_id: number;
  period: string;
  dim: string;
  dim_key: string;
  tokens_in: Generated<number>;
  tokens_out: Generated<number>;
  model_calls: Generated<number>;
  runs: Generated<number>;
  tool_calls: Generated<number>;
  credits: Generated<number>;
  active_devices: Generated<number>;
  updated_at: string;
}

export interface MeterActiveDevicesTable {
  owner_id: number;
  month: string;
  device_id: string;
  first_seen_at: string;
}

export interface MeterBudgetsTable {
  id: string;
  owner_id: number;
  scope: "account" | "apiKey" | "agent" | "device";
  /** '' for the account scope. */
  scope_id: string;
  tokens_per_month: number | null;
  runs_per_day: number | null;
  active_devices: number | null;
  created_at: string;
  updated_at: string;
}

/** A threshold of a budget announced in a period (once per period over all instances). */
export interface MeterNoticesTable {
  owner_id: number;
  budget: string;
  period: string;
  threshold: number;
  created_at: string;
}

/** A share link: the owner's agent (or one note) for guests, with the capabilities it gives. */
export interface ShareLinksTable {
  id: Generated<number>;
  owner_id: number;
  /** SHA-256 of the token, hex: how a redeemed token is found. */
  token_hash: string;
  /** The token sealed with the server's SecretBox, for the owner's listing. */
  token_sealed: string;
  target: "agent" | "note";
  scope: "all" | "folders" | "note_only";
  /** JSON array of folder ids. */
  folder_ids: Generated<string>;
  note_id: number | null;
  access: "read" | "read_calendar" | "read_calendar_write";
  notes_access: "read" | "write" | "edit";
  label: Generated<string>;
  require_sign_in: number;
  email: Generated<number>;
  todos: Generated<number>;
  /** JSON array of tool names. */
  tools: Generated<string>;
  identity: Generated<number>;
  /** 1: guests are answered by the owner's own machine (the bridge), when it answers in time. */
  local_agent: Generated<number>;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface GuestSessionsTable {
  id: Generated<number>;
  /** The public name of the session (`gs_…`). */
  session_id: string;
  /** SHA-256 of the `gsk_…` key that continues the session. */
  session_key_hash: string;
  link_id: number;
  owner_id: number;
  visitor_user_id: number | null;
  visitor_name: string | null;
  fingerprint: string;
  message_count: Generated<number>;
  created_at: string;
  last_active_at: string;
}

export interface GuestMessagesTable {
  id: Generated<number>;
  session_id: number;
  owner_id: number;
  role: "user" | "assistant";
  content: string;
  answered_by: "server" | "local" | null;
  local_state: "pending" | "answered" | "expired" | null;
  created_at: string;
}

/** Raw memory's account state (migration 0039): the current key version and the recovery code's public half. */
export interface RawMemoryAccountsTable {
  owner_id: number;
  current_version: number;
  recovery_public_key: string;
  recovery_salt: string;
  /** JSON `{N, r, p}`. */
  recovery_scrypt: string;
  created_at: string;
  updated_at: string;
}

/** A raw memory collector device; `device_id` is unique over every account. */
export interface RawMemoryDevicesTable {
  device_id: string;
  owner_id: number;
  name: Generated<string>;
  /** X25519, base64. */
  public_key: string;
  enrolled_at: string;
}

/** One account key version wrapped for one recipient (a device id or `recovery`), base64. */
export interface RawMemoryKeysTable {
  owner_id: number;
  key_version: number;
  recipient: string;
  wrapped: string;
  created_at: string;
}

/** One encrypted session. */
export interface RawMemoryRecordsTable {
  id: Generated<number>;
  owner_id: number;
  record_id: string;
  device_id: string;
  runtime: "claude-code" | "codex";
  session_id_hash: string;
  created_at: string;
  key_version: number;
  alg: string;
  /** base64 */
  nonce: string;
  ciphertext: Uint8Array;
  plaintext_bytes: number;
  stored_at: string;
}
