import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ALL_SCOPES } from "@tandem/core";
import { createApiKey } from "../../apps/server/src/auth/api-keys";
import { loadConfig, type ServerConfig } from "../../apps/server/src/config";
import { createUser } from "../../apps/server/src/people/users/users-service";
import { type RunningServer, startServer } from "../../apps/server/src/server";

/** Far above anything a benchmark can send, so the rate limiter never answers 429 (its cost is still paid). */
const UNLIMITED = 1_000_000_000;

export interface BenchTandem {
  readonly server: RunningServer;
  readonly dataDir: string;
  readonly username: string;
  /** Headers that authenticate as the benchmark user with an every-scope API key. */
  readonly authHeaders: Readonly<Record<string, string>>;
  /** Stops the server and deletes its data directory. */
  close(): Promise<void>;
}

/**
 * Starts the real server in this process on a fresh SQLite database in a temp directory, with a
 * user and an API key created through the services (as `tandem-server users add` does).
 * `overrides` changes settings a benchmark depends on (e.g. the realtime stream lifetime).
 */
export async function startBenchTandem(
  username = "bench",
  overrides: Partial<Record<keyof ServerConfig, string | number>> = {},
): Promise<BenchTandem> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-bench-"));
  let server: RunningServer | undefined;
  try {
    // An empty environment: a DATABASE_URL or TANDEM_* variable in the caller's shell must not
    // point the benchmark at another database or change its limits.
    const config = loadConfig(
      {
        port: 0,
        dataDir,
        logLevel: "silent",
        rateLimitPerMinute: UNLIMITED,
        rateLimitBurst: UNLIMITED,
        shutdownGraceMs: 1_000,
        ...overrides,
      },
      {},
    );
    server = await startServer(config);
    const user = await createUser(server.context.db, { username });
    const key = await createApiKey(server.context.db, { userId: user.id, scopes: ALL_SCOPES, label: "benchmark" });
    const running = server;
    return {
      server: running,
      dataDir,
      username,
      authHeaders: { authorization: `Bearer ${key.apiKey}` },
      close: async () => {
        try {
          await running.close();
        } finally {
          await rm(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await server?.close();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
