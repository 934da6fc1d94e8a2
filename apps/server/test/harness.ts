import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ALL_SCOPES, API_BASE_PATH, type Scope, TandemClient } from "@tandem/core";
import pg from "pg";
import { createApiKey } from "../src/auth/api-keys";
import { type ServerConfigInput, ServerConfigSchema } from "../src/config";
import type { Logger } from "../src/logger";
import { createUser } from "../src/people/users/users-service";
import { type RunningServer, startServer } from "../src/server";

/** When set (CI sets it), storage tests also run against this PostgreSQL database. */
export const POSTGRES_URL = process.env.TANDEM_TEST_DATABASE_URL;

/** Redis for tests of several instances (this machine and CI run one). */
export const REDIS_URL = process.env.TANDEM_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A Redis prefix of its own, so test files running at once against one Redis never hear each other. */
export function randomRedisPrefix(): string {
  return `test-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

const BIN = fileURLToPath(new URL("../bin/tandem-server.mjs", import.meta.url));

/**
 * A fresh PostgreSQL schema per test file, reached through `search_path`, so suites never see
 * each other's rows; dropped afterwards.
 */
export async function createPostgresSchema(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  };
}

export interface TestUser {
  userId: number;
  username: string;
  apiKey: string;
  client: TandemClient;
}

export interface TestServer {
  /** The running server; replaced by {@link TestServer.restart}. */
  readonly server: RunningServer;
  dataDir: string;
  databaseUrl: string | undefined;
  /** A client with no credential. */
  anonymous: TandemClient;
  /** Creates a user with a key holding `scopes` (all by default). */
  addUser(username: string, scopes?: readonly Scope[]): Promise<TestUser>;
  /** Raw HTTP against the server, for requests the typed client would never send. */
  fetch(pathAndQuery: string, init?: RequestInit): Promise<Response>;
  /** Runs the real `tandem-server` CLI against this server's storage. */
  cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** Stops the server cleanly and starts it again on the same storage (a new port). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export type StorageKind = "sqlite" | "postgres";

/**
 * Starts the real server on port 0 with a temporary data directory (and schema, on PostgreSQL);
 * with `logger`, it logs there (tests of what is logged), else nowhere.
 */
export async function startTestServer(
  overrides: Partial<ServerConfigInput> = {},
  storage: StorageKind = "sqlite",
  logger?: Logger,
): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-test-"));
  const postgres = storage === "postgres" && POSTGRES_URL ? await createPostgresSchema(POSTGRES_URL) : undefined;
  // Tests send wrong credentials on purpose, all from one address: only a test about that limit meets it.
  const config = ServerConfigSchema.parse({
    port: 0,
    dataDir,
    logLevel: "silent",
    databaseUrl: postgres?.url,
    authFailureBurst: 100_000,
    ...overrides,
  });
  let server = await startServer(config, logger);
  const storageArgs = postgres ? ["--database-url", postgres.url] : ["--data-dir", dataDir];
  const clientFor = (token?: string) => new TandemClient({ baseUrl: server.apiUrl, token, validateResponses: true });
  return {
    get server() {
      return server;
    },
    dataDir,
    databaseUrl: postgres?.url,
    get anonymous() {
      return clientFor();
    },
    async addUser(username, scopes = ALL_SCOPES) {
      const { db } = server.context;
      const user = await createUser(db, { username });
      const key = await createApiKey(db, { userId: user.id, scopes });
      return {
        userId: user.id,
        username: user.username,
        apiKey: key.apiKey,
        // Resolved on each use, so a user's client follows the server across restarts.
        get client() {
          return clientFor(key.apiKey);
        },
      };
    },
    fetch: (pathAndQuery, init) => fetch(`${server.url}${pathAndQuery}`, init),
    cli: (args) => runCli([...args, ...storageArgs]),
    async restart() {
      await server.close();
      server = await startServer(config, logger);
    },
    async stop() {
      await server.close();
      await postgres?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Another instance of `t`'s server: the same storage and settings (its Redis and prefix included),
 * its own port; `overrides` on top. The caller closes it.
 */
export function startAnotherInstance(t: TestServer, overrides: Partial<ServerConfigInput> = {}): Promise<RunningServer> {
  return startServer(ServerConfigSchema.parse({ ...t.server.context.config, port: 0, ...overrides }));
}

/** Runs the real `tandem-server` CLI in a subprocess (in `cwd`, with `env` over this process's environment). */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

export const BIN_PATH = BIN;
/** The root of this checkout. */
export const CHECKOUT = fileURLToPath(new URL("../../..", import.meta.url));

export interface ServerProcess {
  url: string;
  apiUrl: string;
  syncUrl: string;
  /** SIGTERM, as a service manager stops it: the server stores its documents and exits. */
  stop(): Promise<number | null>;
  /** SIGKILL (`kill -9`): the process dies at once, storing nothing and removing no lease. */
  kill(): Promise<void>;
}

/**
 * Starts `tandem-server serve` as a real process of its own (port 0) on the given storage, for
 * tests about several processes on one database; answers once it listens.
 */
export function spawnServerProcess(storageArgs: string[], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--log-level", "info", "--access-log", "silent", ...storageArgs], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  /** The last lines it logged: shown if it exits on its own after listening (a crash to explain). */
  const tail: string[] = [];
  let stopping = false;
  void exited.then((code) => {
    if (!stopping && tail.length > 0)
      console.error(`tandem-server serve exited with ${code} by itself; its last lines:\n${tail.join("\n")}`);
  });
  return new Promise((resolve, reject) => {
    let buffered = "";
    child.once("error", reject);
    void exited.then((code) => reject(new Error(`tandem-server serve exited with ${code} before listening`)));
    // The server logs to stderr, one JSON object a line.
    child.stderr.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        tail.push(line.slice(0, 2000));
        if (tail.length > 10) tail.shift();
        if (!line.includes("tandem server listening")) continue;
        const url = (JSON.parse(line) as { url: string }).url;
        const sync = new URL(url);
        sync.protocol = "ws:";
        resolve({
          url,
          apiUrl: `${url}${API_BASE_PATH}`,
          syncUrl: `${sync.origin}/sync`,
          stop: async () => {
            stopping = true;
            child.kill("SIGTERM");
            return exited;
          },
          kill: async () => {
            stopping = true;
            child.kill("SIGKILL");
            await exited;
          },
        });
      }
    });
  });
}
