import { z } from "zod";

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const ServerConfigSchema = z.object({
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int().min(0).max(65_535).default(8787),
  dataDir: z.string().min(1).default("./data"),
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: "must be a postgres:// or postgresql:// URL" })
    .optional(),
  /**
   * Redis, for what moves between several instances on one PostgreSQL database (document updates and
   * awareness, realtime wake-ups, shared limits); one instance needs none (docs/scaling.md).
   */
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, { error: "must be a redis:// or rediss:// URL" })
    .refine((url) => URL.canParse(url), { error: "must be a redis:// or rediss:// URL" })
    .optional(),
  /**
   * Prefixes every Redis key and channel, so several Tandem servers (or test runs) can share one Redis
   * without hearing each other; every instance of one server must use the same.
   */
  redisPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: "must be 1 to 64 letters, digits or _ . : -" })
    .default("tandem"),
  /**
   * How long an instance's lease on the database lasts without renewal, in ms (renewed every third
   * of it): an instance that died without removing its lease stops counting as running after this.
   */
  instanceLeaseMs: z.coerce.number().int().min(1000).default(30_000),
  logLevel: z.enum(LOG_LEVELS).default("info"),
  /** The level of the one log line per HTTP request (method, path, status, duration, user); `silent` turns it off. */
  accessLog: z.enum(LOG_LEVELS).default("info"),
  rateLimitPerMinute: z.coerce.number().int().positive().default(1200),
  rateLimitBurst: z.coerce.number().int().positive().default(300),
  /** Failed authentications per client address: sustained per minute, and at once. */
  authFailuresPerMinute: z.coerce.number().int().positive().default(60),
  authFailureBurst: z.coerce.number().int().positive().default(60),
  /**
   * Password sign-in, failures in 15 minutes (docs/oauth.md): for one account from one address
   * (then that address waits for that account), from one address over all accounts (then it waits
   * for every account it has not signed in to), and for one account from anywhere (then addresses
   * it has not signed in from are slowed to one attempt a minute, never locked out).
   */
  signInFailuresPerAccountAddress: z.coerce.number().int().positive().default(10),
  signInFailuresPerAddress: z.coerce.number().int().positive().default(50),
  signInSlowdownAfter: z.coerce.number().int().positive().default(20),
  /** How long shutdown waits for open requests before closing them, in ms. */
  shutdownGraceMs: z.coerce.number().int().min(0).default(10_000),
  /** The address people reach this server at, for links it hands out (pairing `approvalUrl`). */
  publicUrl: z
    .string()
    .regex(/^https?:\/\/[^/]+/, { error: "must be an http:// or https:// URL" })
    .optional(),
  /** A runtime endpoint without a heartbeat for this long is offline and leaves routing, in ms. */
  presenceTimeoutMs: z.coerce.number().int().positive().default(60_000),
  /** The server ends each realtime stream after about this long (plus jitter), in ms. */
  streamLifetimeMs: z.coerce.number().int().positive().default(55_000),
  streamJitterMs: z.coerce.number().int().min(0).default(5_000),
  /** A `: ping` comment goes out after this long without an event, in ms. */
  streamPingMs: z.coerce.number().int().positive().default(15_000),
  /**
   * With Redis (several instances), an open stream also reads its log's newest cursor this often,
   * in ms: the fallback that delivers an event whose Redis wake-up was lost (docs/scaling.md).
   */
  streamPollMs: z.coerce.number().int().positive().default(3_000),
  /** How often expiries are swept when nothing else happens, in ms (0 turns the timer off). */
  maintenanceIntervalMs: z.coerce.number().int().min(0).default(5_000),
  /**
   * Credits of a user no operator set a balance for: `unlimited` (the default, so a self-hosted
   * server works out of the box) or a whole number of Credits each calendar month (UTC).
   */
  creditAllowance: z
    .union([z.literal("unlimited"), z.coerce.number().int().min(0).max(1_000_000_000)], {
      error: 'must be "unlimited" or a whole number of Credits per month',
    })
    .default("unlimited"),
  /**
   * Operator ceilings per account (docs/metering.md): tokens a month, agent runs a day and devices
   * active a month. Unset: none. An owner's budgets can only be lower.
   */
  maxTokensPerMonth: z.coerce.number().int().min(0).max(1_000_000_000_000).optional(),
  maxRunsPerDay: z.coerce.number().int().min(0).max(10_000_000).optional(),
  maxActiveDevices: z.coerce.number().int().min(0).max(100_000).optional(),
  /** A JSON rate card for `GET /metering/invoice` (docs/metering.md); unset: every rate 0. */
  rateCardFile: z.string().min(1).optional(),
  /**
   * Seats of the server's team when the operator has not set them (`tandem-server team seats`):
   * `unlimited` (the default) or a whole number. Members and pending invites each take one.
   */
  teamSeats: z
    .union([z.literal("unlimited"), z.coerce.number().int().min(1).max(1_000_000)], {
      error: 'must be "unlimited" or a whole number of seats (at least 1)',
    })
    .default("unlimited"),
  /**
   * The largest a document (a note body, a workspace, a todo list) may grow, stored, in bytes; also
   * the largest single update a sync client may send.
   */
  maxDocumentBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  /** What one user's documents and snapshots may take together, in bytes. */
  userQuotaBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024 * 1024),
  /** Sockets one credential (an API key, an app's grant) may hold open on `/yjs` at once, over every instance: one per document. */
  yjsSocketsPerCredential: z.coerce.number().int().positive().default(100),
  /** Awareness messages (cursors) one `/yjs` socket may send: at once, then per second. */
  yjsAwarenessBurst: z.coerce.number().int().positive().default(120),
  yjsAwarenessPerSecond: z.coerce.number().positive().default(30),
  /**
   * Which model the agent layer talks to: `local` (the embedded default: a deterministic agent that
   * needs no network), `openai-compatible` (chat completions: Ollama, llama.cpp, vLLM, LM Studio,
   * OpenAI) or `anthropic` (the Messages API).
   */
  modelProvider: z.enum(["local", "openai-compatible", "anthropic"]).default("local"),
  /** The provider's API base, such as `http://127.0.0.1:11434/v1` (required for openai-compatible). */
  modelBaseUrl: z
    .string()
    .regex(/^https?:\/\/[^/]+/, { error: "must be an http:// or https:// URL" })
    .optional(),
  /** The provider's API key; never logged or returned. */
  modelApiKey: z.string().min(1).optional(),
  /** The provider's model id behind the alias `default` (required for remote providers). */
  model: z.string().min(1).max(200).optional(),
  /** Optional model ids behind the aliases `fast` and `smart`; each falls back to `model`. */
  modelFast: z.string().min(1).max(200).optional(),
  modelSmart: z.string().min(1).max(200).optional(),
  /** An embedding model of the openai-compatible provider; when set, search ranks by meaning as well as words. */
  embeddingModel: z.string().min(1).max(200).optional(),
  /** Limits of one agent run: model steps (each may call tools) and wall-clock time in ms. */
  agentMaxSteps: z.coerce.number().int().min(1).max(50).default(8),
  agentTimeoutMs: z.coerce.number().int().min(1000).default(120_000),
  /** A chat stream silent this long gets a progress line (clients give up after ~75 s), in ms. */
  agentProgressMs: z.coerce.number().int().min(50).default(15_000),
  /** How long an escalation waits for its owner before it counts as stop, in ms (24 h). */
  escalationTtlMs: z.coerce
    .number()
    .int()
    .min(1000)
    .default(24 * 60 * 60_000),
  /** Scheduled heartbeats this instance runs at once; 0: it runs none (another instance does). */
  heartbeatConcurrency: z.coerce.number().int().min(0).max(64).default(4),
  /** Guest messages one share-link session may send; the next is a 429. */
  guestMessageLimit: z.coerce.number().int().min(1).max(10_000).default(50),
  /** Share-link attempts (page, meta, message, connect) per client address per minute (also the burst). */
  shareAttemptsPerMinute: z.coerce.number().int().positive().default(60),
  /** Attempts on one share token per minute, from anywhere (also the burst). */
  shareTokenAttemptsPerMinute: z.coerce.number().int().positive().default(120),
  /** Unknown, expired or revoked tokens per client address per minute before it must wait (also the burst). */
  shareFailuresPerMinute: z.coerce.number().int().positive().default(20),
  /** How long a guest waits for the owner's machine to answer on a link answered locally, in ms. */
  guestLocalWaitMs: z.coerce.number().int().min(0).max(120_000).default(30_000),
  /**
   * The key that encrypts stored third-party tokens and the server's signing keys (environment only;
   * never logged). Without it, a random key is kept in `<dataDir>/secret.key`; several instances
   * sharing one PostgreSQL database must all set the same value.
   */
  secretKey: z.string().min(16, { error: "must be at least 16 characters" }).optional(),
  /**
   * Lets remote tool servers (and their authorization servers) live at loopback, private,
   * link-local or metadata addresses. Off by default: the server fetches URLs users type, and must
   * not become a way into the operator's network. Turn on for single-machine setups and tests.
   */
  allowPrivateToolServers: z
    .union([z.boolean(), z.enum(["1", "0", "true", "false"])])
    .transform((value) => value === true || value === "1" || value === "true")
    .default(false),
  /** The longest one call to a remote tool server may take (connect included), in ms. */
  toolServerTimeoutMs: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /**
   * Lets webhook receivers live at loopback, private, link-local or metadata addresses. Off by
   * default, for the same reason as tool servers; on for tests and single-machine installs.
   */
  allowPrivateWebhooks: z
    .union([z.boolean(), z.enum(["1", "0", "true", "false"])])
    .transform((value) => value === true || value === "1" || value === "true")
    .default(false),
  /** How long one webhook attempt may take before it counts as failed, in ms (Standard Webhooks: 15 s). */
  webhookTimeoutMs: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /**
   * The waits before each retry of a failed delivery, in ms, comma-separated (jitter is added). The
   * default is the contract's 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h; tests shorten it.
   */
  webhookRetryDelaysMs: z
    .union([
      z
        .string()
        .regex(/^\d+(,\d+){0,19}$/, { error: "a comma-separated list of up to 20 waits in ms" })
        .transform((list) => list.split(",").map(Number)),
      z.array(z.number().int().min(0)).min(1).max(20),
    ])
    .default([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000]),
  /** How often the webhook worker looks for due deliveries besides being woken by new ones, in ms. */
  webhookPollMs: z.coerce.number().int().min(10).max(600_000).default(1_000),
  /** Finished deliveries (succeeded or failed) older than this many days leave the delivery log. */
  webhookRetentionDays: z.coerce.number().int().min(1).max(3650).default(30),
});

export type ServerConfig = z.infer<typeof ServerConfigSchema>;
export type ServerConfigInput = z.input<typeof ServerConfigSchema>;

/** Each setting's environment variable; flags win over these, these over the defaults. */
export const ENVIRONMENT: Record<keyof ServerConfig, readonly string[]> = {
  host: ["TANDEM_HOST"],
  port: ["TANDEM_PORT", "PORT"],
  dataDir: ["TANDEM_DATA_DIR"],
  databaseUrl: ["TANDEM_DATABASE_URL", "DATABASE_URL"],
  redisUrl: ["TANDEM_REDIS_URL"],
  redisPrefix: ["TANDEM_REDIS_PREFIX"],
  instanceLeaseMs: ["TANDEM_INSTANCE_LEASE_MS"],
  logLevel: ["TANDEM_LOG_LEVEL"],
  accessLog: ["TANDEM_ACCESS_LOG"],
  rateLimitPerMinute: ["TANDEM_RATE_LIMIT_PER_MINUTE"],
  rateLimitBurst: ["TANDEM_RATE_LIMIT_BURST"],
  authFailuresPerMinute: ["TANDEM_AUTH_FAILURES_PER_MINUTE"],
  authFailureBurst: ["TANDEM_AUTH_FAILURE_BURST"],
  signInFailuresPerAccountAddress: ["TANDEM_SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS"],
  signInFailuresPerAddress: ["TANDEM_SIGN_IN_FAILURES_PER_ADDRESS"],
  signInSlowdownAfter: ["TANDEM_SIGN_IN_SLOWDOWN_AFTER"],
  shutdownGraceMs: ["TANDEM_SHUTDOWN_GRACE_MS"],
  publicUrl: ["TANDEM_PUBLIC_URL"],
  presenceTimeoutMs: ["TANDEM_PRESENCE_TIMEOUT_MS"],
  streamLifetimeMs: ["TANDEM_STREAM_LIFETIME_MS"],
  streamJitterMs: ["TANDEM_STREAM_JITTER_MS"],
  streamPingMs: ["TANDEM_STREAM_PING_MS"],
  streamPollMs: ["TANDEM_STREAM_POLL_MS"],
  maintenanceIntervalMs: ["TANDEM_MAINTENANCE_INTERVAL_MS"],
  creditAllowance: ["TANDEM_CREDIT_ALLOWANCE"],
  maxTokensPerMonth: ["TANDEM_MAX_TOKENS_PER_MONTH"],
  maxRunsPerDay: ["TANDEM_MAX_RUNS_PER_DAY"],
  maxActiveDevices: ["TANDEM_MAX_ACTIVE_DEVICES"],
  rateCardFile: ["TANDEM_RATE_CARD_FILE"],
  teamSeats: ["TANDEM_TEAM_SEATS"],
  maxDocumentBytes: ["TANDEM_MAX_DOCUMENT_BYTES"],
  userQuotaBytes: ["TANDEM_USER_QUOTA_BYTES"],
  yjsSocketsPerCredential: ["TANDEM_YJS_SOCKETS_PER_CREDENTIAL"],
  yjsAwarenessBurst: ["TANDEM_YJS_AWARENESS_BURST"],
  yjsAwarenessPerSecond: ["TANDEM_YJS_AWARENESS_PER_SECOND"],
  modelProvider: ["TANDEM_MODEL_PROVIDER"],
  modelBaseUrl: ["TANDEM_MODEL_BASE_URL"],
  modelApiKey: ["TANDEM_MODEL_API_KEY"],
  model: ["TANDEM_MODEL"],
  modelFast: ["TANDEM_MODEL_FAST"],
  modelSmart: ["TANDEM_MODEL_SMART"],
  embeddingModel: ["TANDEM_EMBEDDING_MODEL"],
  agentMaxSteps: ["TANDEM_AGENT_MAX_STEPS"],
  agentTimeoutMs: ["TANDEM_AGENT_TIMEOUT_MS"],
  agentProgressMs: ["TANDEM_AGENT_PROGRESS_MS"],
  heartbeatConcurrency: ["TANDEM_HEARTBEAT_CONCURRENCY"],
  escalationTtlMs: ["TANDEM_ESCALATION_TTL_MS", "TANDEM_ESCALATION_TTL"],
  guestMessageLimit: ["TANDEM_GUEST_MESSAGE_LIMIT"],
  shareAttemptsPerMinute: ["TANDEM_SHARE_ATTEMPTS_PER_MINUTE"],
  shareTokenAttemptsPerMinute: ["TANDEM_SHARE_TOKEN_ATTEMPTS_PER_MINUTE"],
  shareFailuresPerMinute: ["TANDEM_SHARE_FAILURES_PER_MINUTE"],
  guestLocalWaitMs: ["TANDEM_GUEST_LOCAL_WAIT_MS"],
  secretKey: ["TANDEM_SECRET_KEY"],
  allowPrivateToolServers: ["TANDEM_ALLOW_PRIVATE_TOOL_SERVERS"],
  toolServerTimeoutMs: ["TANDEM_TOOL_SERVER_TIMEOUT_MS"],
  allowPrivateWebhooks: ["TANDEM_ALLOW_PRIVATE_WEBHOOKS"],
  webhookTimeoutMs: ["TANDEM_WEBHOOK_TIMEOUT_MS"],
  webhookRetryDelaysMs: ["TANDEM_WEBHOOK_RETRY_DELAYS_MS"],
  webhookPollMs: ["TANDEM_WEBHOOK_POLL_MS"],
  webhookRetentionDays: ["TANDEM_WEBHOOK_RETENTION_DAYS"],
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Merges flags over the environment over defaults, and validates the result. */
export function loadConfig(
  flags: Partial<Record<keyof ServerConfig, string | number | undefined>>,
  env: NodeJS.ProcessEnv = process.env,
): ServerConfig {
  const merged: Record<string, unknown> = {};
  for (const [key, names] of Object.entries(ENVIRONMENT) as [keyof ServerConfig, readonly string[]][]) {
    const fromEnv = names.map((name) => env[name]).find((value) => value !== undefined && value !== "");
    const value = flags[key] ?? fromEnv;
    if (value !== undefined) merged[key] = value;
  }
  const result = ServerConfigSchema.safeParse(merged);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "));
  }
  return result.data;
}
