/**
 * The Tandem server on a pre-seeded notes workspace: a temp data directory is seeded in a child
 * process (seed-child.ts), then the server starts on it in this process, configured as
 * `startBenchTandem` configures it (port 0, silent logs, no reachable rate limit, no environment),
 * and gets an every-scope API key for the seeded user.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ALL_SCOPES } from "@tandem/core";
import { createApiKey } from "../../apps/server/src/auth/api-keys";
import { loadConfig } from "../../apps/server/src/config";
import { type RunningServer, startServer } from "../../apps/server/src/server";
import { startChild } from "./child";
import type { SeedOptions, SeedResult } from "./notes-seed";
import type { SeedAnswer, SeedRequest } from "./seed-child";
import type { BenchTandem } from "./tandem";

const UNLIMITED = 1_000_000_000;

export interface SeededTandem extends BenchTandem {
  readonly userId: number;
  /** The API key itself, for sync providers' `token`. */
  readonly apiKey: string;
  readonly seed: SeedResult;
  /** Wall-clock time of the seeding child's work, database creation and migration included. */
  readonly seedWallMs: number;
}

export async function startSeededTandem(options: SeedOptions, username = "bench"): Promise<SeededTandem> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-bench-notes-"));
  let server: RunningServer | undefined;
  try {
    const child = await startChild(new URL("./seed-child.ts", import.meta.url));
    let answer: SeedAnswer;
    try {
      answer = await child.call<SeedAnswer>("seed", { dataDir, username, options } satisfies SeedRequest);
    } finally {
      await child.close();
    }
    const config = loadConfig(
      { port: 0, dataDir, logLevel: "silent", rateLimitPerMinute: UNLIMITED, rateLimitBurst: UNLIMITED, shutdownGraceMs: 1_000 },
      {},
    );
    server = await startServer(config);
    const key = await createApiKey(server.context.db, { userId: answer.userId, scopes: ALL_SCOPES, label: "benchmark" });
    const running = server;
    return {
      server: running,
      dataDir,
      username,
      userId: answer.userId,
      apiKey: key.apiKey,
      authHeaders: { authorization: `Bearer ${key.apiKey}` },
      seed: answer.result,
      seedWallMs: answer.wallMs,
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
