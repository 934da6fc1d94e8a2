import path from "node:path";
import { parseArgs } from "node:util";
import { ALL_SCOPES, parseScopeList } from "@tandem/core";
import { ConfigError, loadConfig, type ServerConfig } from "../config";
import type { openDatabase } from "../db/database";
import { ApiError } from "../http/errors";
import { SERVER_PACKAGE_DIR } from "../server-files";
import { InstanceConflictError } from "../system/instance-lease";

// Each command imports what it needs when it runs (`await import(…)`), so `--help` or `keys list`
// never loads the HTTP server, the sync hub or the agent, and answers at once.

const USAGE = `Usage: tandem-server <command> [options]

Commands:
  serve                                  start the server
  users add <username> [--name N] [--email E]
                                         create a user and its first API key (every scope)
  users passwd <username>                set a user's password for signing in to browser pages (read
                                         from stdin, first line; prompted for when stdin is a terminal)
  keys create <username> [--scopes os.notes:read,…] [--label L]
                                         create an API key (default: every scope)
  keys list <username>                   list a user's keys (ids, labels, scopes, last use)
  keys revoke <keyId>                    revoke an API key at once
  views rebuild                          recompute the SQL views (lists, search) from the documents
  credits set <username> <n>             set a user's Credit balance (each task_invite takes one)
  credits show <username>                print a user's Credit balance (set, or the server's default)
  team show                              print the server's team: name, seats, members, pending invites
  team seats <n|unlimited|default>       set the team's seats (default: back to --team-seats / TANDEM_TEAM_SEATS)
  team name <name>                       rename the team

Storage options (every command):
  --data-dir DIR          embedded SQLite database directory (default: data/ in the Tandem checkout,
                          whichever folder the command runs in)
  --database-url URL      use PostgreSQL instead (postgres://…)
  --create-database       let a command other than serve start a new, empty database (otherwise it
                          refuses when there is none where it looks; serve always creates one)

Serve options:
  --port N                (default 8787)   --host H   (default 127.0.0.1)
  --log-level L           fatal|error|warn|info|debug|trace|silent
  --access-log L          the level of the line logged per request (default info; silent: none)
  --public-url URL        the address people reach the server at (for pairing links)
  --redis-url URL         Redis shared by several instances on one PostgreSQL database (redis://…)
  --credit-allowance A    Credits of users no balance was set for: unlimited (default) or N a month
  --team-seats S          the team's seats when 'team seats' set none: unlimited (default) or N
  --max-document-bytes N  the largest a document may grow (default 33554432, 32 MiB)
  --user-quota-bytes N    what one user's documents and snapshots may take (default 1073741824, 1 GiB)

Agent options (see docs/operating.md#the-agents-model):
  --model-provider P      local (default, no network) | openai-compatible | anthropic
  --model-base-url URL    the provider's API base (openai-compatible: required, e.g. http://127.0.0.1:11434/v1)
  --model ID              the provider's model behind the alias "default" (remote providers: required)
  --model-fast ID, --model-smart ID   the models behind the aliases "fast" and "smart" (default: --model)
  --embedding-model ID    an openai-compatible embedding model; search then ranks by meaning too
  The API key comes only from the environment (TANDEM_MODEL_API_KEY), never from a flag.

Every option can also come from the environment: TANDEM_PORT, TANDEM_HOST, TANDEM_DATA_DIR,
TANDEM_DATABASE_URL (or DATABASE_URL), TANDEM_LOG_LEVEL, TANDEM_ACCESS_LOG, TANDEM_RATE_LIMIT_PER_MINUTE,
TANDEM_RATE_LIMIT_BURST, TANDEM_AUTH_FAILURES_PER_MINUTE, TANDEM_AUTH_FAILURE_BURST, TANDEM_SHUTDOWN_GRACE_MS,
TANDEM_PUBLIC_URL, TANDEM_PRESENCE_TIMEOUT_MS,
TANDEM_STREAM_LIFETIME_MS, TANDEM_STREAM_JITTER_MS, TANDEM_STREAM_PING_MS, TANDEM_STREAM_POLL_MS,
TANDEM_MAINTENANCE_INTERVAL_MS, TANDEM_CREDIT_ALLOWANCE, TANDEM_TEAM_SEATS, TANDEM_MAX_DOCUMENT_BYTES, TANDEM_USER_QUOTA_BYTES,
TANDEM_MODEL_PROVIDER, TANDEM_MODEL_BASE_URL, TANDEM_MODEL_API_KEY, TANDEM_MODEL, TANDEM_MODEL_FAST,
TANDEM_MODEL_SMART, TANDEM_EMBEDDING_MODEL, TANDEM_AGENT_MAX_STEPS, TANDEM_AGENT_TIMEOUT_MS,
TANDEM_AGENT_PROGRESS_MS, TANDEM_HEARTBEAT_CONCURRENCY.`;

class UsageError extends Error {}

/** A failure the user can act on, printed as one line (exit 1). */
class CliError extends Error {}

/**
 * The default data directory: `data/` at the root of this checkout (where `npm start` keeps it),
 * not the working directory, so `npx tandem-server …` run from a subfolder finds the same database.
 */
const CHECKOUT_DATA_DIR = path.join(SERVER_PACKAGE_DIR, "..", "..", "data");

const OPTIONS = {
  "data-dir": { type: "string" },
  "database-url": { type: "string" },
  "redis-url": { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  "log-level": { type: "string" },
  "access-log": { type: "string" },
  "rate-limit-per-minute": { type: "string" },
  "rate-limit-burst": { type: "string" },
  "public-url": { type: "string" },
  "credit-allowance": { type: "string" },
  "team-seats": { type: "string" },
  "max-document-bytes": { type: "string" },
  "user-quota-bytes": { type: "string" },
  "model-provider": { type: "string" },
  "model-base-url": { type: "string" },
  model: { type: "string" },
  "model-fast": { type: "string" },
  "model-smart": { type: "string" },
  "embedding-model": { type: "string" },
  name: { type: "string" },
  email: { type: "string" },
  scopes: { type: "string" },
  label: { type: "string" },
  "create-database": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

function configFrom(values: Values): ServerConfig {
  const env = { ...process.env };
  if (!env.TANDEM_DATA_DIR) env.TANDEM_DATA_DIR = CHECKOUT_DATA_DIR;
  return loadConfig(
    {
      dataDir: values["data-dir"],
      databaseUrl: values["database-url"],
      redisUrl: values["redis-url"],
      port: values.port,
      host: values.host,
      logLevel: values["log-level"],
      accessLog: values["access-log"],
      rateLimitPerMinute: values["rate-limit-per-minute"],
      rateLimitBurst: values["rate-limit-burst"],
      publicUrl: values["public-url"],
      creditAllowance: values["credit-allowance"],
      teamSeats: values["team-seats"],
      maxDocumentBytes: values["max-document-bytes"],
      userQuotaBytes: values["user-quota-bytes"],
      modelProvider: values["model-provider"],
      modelBaseUrl: values["model-base-url"],
      model: values.model,
      modelFast: values["model-fast"],
      modelSmart: values["model-smart"],
      embeddingModel: values["embedding-model"],
    },
    env,
  );
}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function operand(positionals: string[], index: number, what: string): string {
  const value = positionals[index];
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

/** Runs `work` on the configured database, which must exist unless --create-database; says which one on stderr. */
async function withDatabase<T>(values: Values, work: (db: Awaited<ReturnType<typeof openDatabase>>["db"]) => Promise<T>): Promise<T> {
  const { DatabaseNotFoundError, openDatabase } = await import("../db/database");
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase({ ...configFrom(values), create: values["create-database"] === true });
  } catch (error) {
    if (!(error instanceof DatabaseNotFoundError)) throw error;
    throw new CliError(
      `${error.message}. Point the command at the server's storage (--data-dir, TANDEM_DATA_DIR or --database-url), ` +
        "or pass --create-database to start a new, empty one.",
    );
  }
  process.stderr.write(`tandem-server: ${database.dialect} database ${database.location}\n`);
  try {
    return await work(database.db);
  } finally {
    await database.close();
  }
}

/** Why the server could not listen, in one line, for the errors a user can fix. */
function listenFailure(error: unknown, config: ServerConfig): CliError | undefined {
  const address = `${config.host}:${config.port}`;
  switch ((error as NodeJS.ErrnoException).code) {
    case "EADDRINUSE":
      return new CliError(`${address} is already in use (another tandem-server?); choose another port with --port or TANDEM_PORT`);
    case "EACCES":
      return new CliError(`not allowed to listen on ${address}; choose a port above 1023 with --port or TANDEM_PORT`);
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return new CliError(`cannot listen on ${config.host}: not an address of this machine; choose another with --host or TANDEM_HOST`);
    default:
      return undefined;
  }
}

async function serve(values: Values): Promise<number> {
  const config = configFrom(values);
  const [{ createLogger }, { startServer }] = await Promise.all([import("../logger"), import("../server")]);
  const logger = createLogger(config.logLevel);
  // Listening before the server starts: a signal that comes while it starts, or right after it
  // logs that it listens, stops it cleanly instead of killing the process.
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  const server = await startServer(config, logger).catch((error: unknown) => {
    throw listenFailure(error, config) ?? error;
  });
  logger.info({ signal: await signalled }, "signal received");
  try {
    await server.close();
    return 0;
  } catch (error) {
    logger.error({ err: error }, "shutdown failed");
    return 1;
  }
}

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, sub] = positionals;
  if (values.help || !command || command === "help") {
    process.stdout.write(`${USAGE}\n`);
    return command || values.help ? 0 : 2;
  }
  switch (`${command} ${command === "serve" ? "" : (sub ?? "")}`.trim()) {
    case "serve":
      return serve(values);
    case "users add": {
      const username = operand(positionals, 2, "<username>");
      const [{ createApiKey }, { createUser }] = await Promise.all([import("../auth/api-keys"), import("../people/users/users-service")]);
      const result = await withDatabase(values, async (db) => {
        const user = await createUser(db, { username, name: values.name, email: values.email });
        const key = await createApiKey(db, { userId: user.id, scopes: ALL_SCOPES, label: "initial key" });
        return { userId: user.id, username: user.username, apiKey: key.apiKey, keyId: key.keyId, scopes: key.scopes };
      });
      print(result);
      return 0;
    }
    case "users passwd": {
      const username = operand(positionals, 2, "<username>");
      const [{ passwordProblem, setPassword }, { requireUserByUsername }] = await Promise.all([
        import("../auth/passwords"),
        import("../people/users/users-service"),
      ]);
      const password = await readPassword();
      const problem = passwordProblem(password);
      if (problem) throw new CliError(`the password ${problem}`);
      const result = await withDatabase(values, async (db) => {
        const user = await requireUserByUsername(db, username);
        await setPassword(db, user.id, password);
        return { userId: user.id, username: user.username, passwordSet: true };
      });
      print(result);
      return 0;
    }
    case "keys create": {
      const username = operand(positionals, 2, "<username>");
      const [{ createApiKey }, { requireUserByUsername }] = await Promise.all([
        import("../auth/api-keys"),
        import("../people/users/users-service"),
      ]);
      let scopes = [...ALL_SCOPES];
      try {
        if (values.scopes !== undefined) scopes = parseScopeList(values.scopes);
      } catch (error) {
        throw new UsageError(`--scopes: ${(error as Error).message}`);
      }
      const result = await withDatabase(values, async (db) => {
        const user = await requireUserByUsername(db, username);
        return createApiKey(db, { userId: user.id, scopes, label: values.label ?? null });
      });
      print({
        keyId: result.keyId,
        apiKey: result.apiKey,
        userId: result.userId,
        username,
        label: result.label,
        scopes: result.scopes,
        createdAt: result.createdAt,
      });
      return 0;
    }
    case "keys list": {
      const username = operand(positionals, 2, "<username>");
      const [{ listApiKeys }, { requireUserByUsername }] = await Promise.all([
        import("../auth/api-keys"),
        import("../people/users/users-service"),
      ]);
      const keys = await withDatabase(values, async (db) => listApiKeys(db, (await requireUserByUsername(db, username)).id));
      for (const key of keys) print(key);
      return 0;
    }
    case "keys revoke": {
      const keyId = operand(positionals, 2, "<keyId>");
      const config = configFrom(values);
      const { revokeApiKey } = await import("../auth/api-keys");
      const revoked = await withDatabase(values, async (db) => {
        const owner = await db.selectFrom("api_keys").select("user_id").where("id", "=", keyId).executeTakeFirst();
        return { ...(await revokeApiKey(db, keyId)), userId: owner?.user_id };
      });
      // With Redis, every running instance closes the key's sync connections and streams now,
      // not at its next look at the database.
      if (config.redisUrl && revoked.userId !== undefined) {
        const [{ openSharedState }, { createLogger }, { announceAccessChange }, { streamKeyName }] = await Promise.all([
          import("../shared/shared-state"),
          import("../logger"),
          import("../shared/access-changes"),
          import("../delegation/realtime/event-log"),
        ]);
        const shared = await openSharedState(config, createLogger("warn"));
        announceAccessChange(shared, { endStreams: [streamKeyName({ userId: revoked.userId })] });
        await shared.close();
      }
      print({ keyId: revoked.keyId, revokedAt: revoked.revokedAt });
      return 0;
    }
    case "views rebuild": {
      const { rebuildViews } = await import("../workspace/views/rebuild-views");
      print(await withDatabase(values, (db) => rebuildViews(db)));
      return 0;
    }
    case "credits set": {
      const username = operand(positionals, 2, "<username>");
      const amount = operand(positionals, 3, "<n>");
      if (!/^\d{1,15}$/.test(amount)) throw new UsageError(`<n> must be a non-negative whole number, not "${amount}"`);
      const [{ Clock }, { setCreditBalance }, { requireUserByUsername }] = await Promise.all([
        import("../clock"),
        import("../delegation/grants/credits"),
        import("../people/users/users-service"),
      ]);
      const result = await withDatabase(values, async (db) => {
        const user = await requireUserByUsername(db, username);
        const balance = await db.transaction().execute((tx) => setCreditBalance(tx, new Clock(), user.id, Number(amount), "system"));
        return { userId: user.id, username: user.username, balance };
      });
      print(result);
      return 0;
    }
    case "credits show": {
      const username = operand(positionals, 2, "<username>");
      const [{ Clock }, { creditStanding }, { requireUserByUsername }] = await Promise.all([
        import("../clock"),
        import("../delegation/grants/credits"),
        import("../people/users/users-service"),
      ]);
      const result = await withDatabase(values, async (db) => {
        const user = await requireUserByUsername(db, username);
        const standing = await creditStanding(db, new Clock(), configFrom(values).creditAllowance, user.id);
        return { userId: user.id, username: user.username, ...standing };
      });
      print(result);
      return 0;
    }
    case "team show": {
      const config = configFrom(values);
      const [{ Clock }, { operatorTeamView }] = await Promise.all([import("../clock"), import("../people/team/team-service")]);
      print(await withDatabase(values, (db) => operatorTeamView({ db, config, clock: new Clock() })));
      return 0;
    }
    case "team seats": {
      const value = operand(positionals, 2, "<n|unlimited|default>");
      if (!/^(\d{1,7}|unlimited|default)$/.test(value) || value === "0" || /^0/.test(value)) {
        throw new UsageError(`<n> must be a whole number of seats (at least 1), "unlimited" or "default", not "${value}"`);
      }
      const config = configFrom(values);
      const [{ Clock, nowIso }, { operatorTeamView, setTeamSeats, UNLIMITED_SEATS }] = await Promise.all([
        import("../clock"),
        import("../people/team/team-service"),
      ]);
      const result = await withDatabase(values, async (db) => {
        // "unlimited" is stored as a number no team reaches, so it overrides a limited default too.
        const seats = value === "default" ? null : value === "unlimited" ? UNLIMITED_SEATS : Number(value);
        await setTeamSeats(db, seats, nowIso());
        return operatorTeamView({ db, config, clock: new Clock() });
      });
      print(result);
      if (result.seats !== null && result.seatsUsed > result.seats) {
        process.stderr.write(
          `tandem-server: warning: ${result.seatsUsed} seats are in use, more than ${result.seats}; nobody is removed, but no one can join until seats free up\n`,
        );
      }
      return 0;
    }
    case "team name": {
      const name = positionals.slice(2).join(" ").trim();
      if (name.length === 0 || name.length > 100) throw new UsageError("<name> must be 1 to 100 characters");
      const config = configFrom(values);
      const [{ Clock, nowIso }, { operatorTeamView, setTeamName }] = await Promise.all([
        import("../clock"),
        import("../people/team/team-service"),
      ]);
      print(
        await withDatabase(values, async (db) => {
          await setTeamName(db, name, nowIso());
          return operatorTeamView({ db, config, clock: new Clock() });
        }),
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${positionals.join(" ")}"`);
  }
}

/**
 * The new password: the first line of stdin, or typed at a prompt (not echoed) when stdin is a
 * terminal. Never a flag: flags end up in shell history and process lists.
 */
async function readPassword(): Promise<string> {
  const { stdin, stderr } = process;
  if (!stdin.isTTY) {
    let text = "";
    for await (const chunk of stdin) {
      text += chunk.toString();
      if (text.includes("\n") || text.length > 4096) break;
    }
    return (text.split(/\r?\n/)[0] ?? "").slice(0, 4096);
  }
  const readline = await import("node:readline");
  const rl = readline.createInterface({ input: stdin, output: stderr, terminal: true });
  // Echo nothing of what is typed.
  (rl as unknown as { _writeToOutput: (text: string) => void })._writeToOutput = () => {};
  stderr.write("New password: ");
  const answer = await new Promise<string>((resolve) => rl.question("", resolve));
  rl.close();
  stderr.write("\n");
  return answer;
}

/** Runs the CLI; answers the exit code (0 ok, 1 failed, 2 usage). Errors go to stderr as one line. */
export async function main(argv: string[]): Promise<number> {
  try {
    return await run(argv);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`tandem-server: ${(error as Error).message}\n\n${USAGE}\n`);
      return 2;
    }
    if (error instanceof ApiError || error instanceof ConfigError || error instanceof CliError || error instanceof InstanceConflictError) {
      process.stderr.write(`tandem-server: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`tandem-server: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}
