/**
 * Two instances of the real server in this process on one PostgreSQL schema and one Redis prefix,
 * for `npm run bench -- scale`: a fresh schema (reached through `search_path`) and prefix per run,
 * dropped afterwards.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ALL_SCOPES } from "@tandem/core";
import pg from "pg";
import { createApiKey } from "../../apps/server/src/auth/api-keys";
import { loadConfig } from "../../apps/server/src/config";
import { createUser } from "../../apps/server/src/people/users/users-service";
import { type RunningServer, startServer } from "../../apps/server/src/server";

export interface ScalePair {
  readonly one: RunningServer;
  readonly two: RunningServer;
  /** The schema's URL (its `search_path` set), for a seeding child process. */
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** Creates a user and an every-scope API key for it; answers the user's id and the key. */
  user(username: string): Promise<{ id: number; apiKey: string }>;
  close(): Promise<void>;
}

/** A fresh schema on the benchmark's PostgreSQL, reached through `search_path`; dropped afterwards. */
async function freshSchema(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `bench_scale_${randomBytes(5).toString("hex")}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create schema ${schema}`);
  const url = new URL(baseUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return { url: url.toString(), drop: () => admin(`drop schema if exists ${schema} cascade`) };
}

/** Two instances of one server: one schema, one Redis prefix, streams that outlive the run. */
export async function startScalePair(baseDatabaseUrl: string, redisUrl: string): Promise<ScalePair> {
  const schema = await freshSchema(baseDatabaseUrl);
  const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-bench-scale-"));
  const redisPrefix = `bench-scale-${randomBytes(5).toString("hex")}`;
  const servers: RunningServer[] = [];
  const close = async () => {
    for (const server of servers.reverse()) await server.close();
    await schema.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  const start = async () => {
    const server = await startServer(
      loadConfig(
        {
          port: 0,
          dataDir,
          databaseUrl: schema.url,
          redisUrl,
          redisPrefix,
          logLevel: "silent",
          accessLog: "silent",
          rateLimitPerMinute: 1_000_000_000,
          rateLimitBurst: 1_000_000_000,
          streamLifetimeMs: 3_600_000,
          streamJitterMs: 0,
          shutdownGraceMs: 1_000,
        },
        {},
      ),
    );
    servers.push(server);
    return server;
  };
  try {
    // One after the other: the first runs the migrations.
    const one = await start();
    const two = await start();
    await Promise.all([one.context.realtime.wakeups?.ready(), two.context.realtime.wakeups?.ready()]);
    const { db } = one.context;
    return {
      one,
      two,
      databaseUrl: schema.url,
      redisUrl,
      user: async (username) => {
        const user = await createUser(db, { username });
        const { apiKey } = await createApiKey(db, { userId: user.id, scopes: ALL_SCOPES, label: "benchmark" });
        return { id: user.id, apiKey };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
