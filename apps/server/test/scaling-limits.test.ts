import { randomUUID } from "node:crypto";
import { ALL_SCOPES, workspaceDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RUNS_PER_USER } from "../src/agent/chat/chat-routes";
import { createApiKey } from "../src/auth/api-keys";
import { type RunningServer, startServer } from "../src/server";
import { type FakeProvider, startFakeOpenAI } from "./fakes/fake-openai";
import { POSTGRES_URL, runCli, startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

/**
 * Two real instances on one PostgreSQL schema and one Redis (its own key prefix, as test files
 * share the Redis): what one instance counts, the other must see (docs/scaling.md, "What is
 * shared, and where").
 */
const REDIS_URL = process.env.TANDEM_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe.skipIf(!POSTGRES_URL)("limits and signals shared by two instances (PostgreSQL + Redis)", () => {
  const redis = { redisUrl: REDIS_URL, redisPrefix: `test-limits-${randomUUID().slice(0, 8)}` };
  // Budgets small enough to spend in a test; each test uses its own users, so its own budgets.
  const limits = {
    rateLimitBurst: 12,
    rateLimitPerMinute: 12,
    authFailureBurst: 5,
    authFailuresPerMinute: 5,
    shareFailuresPerMinute: 3,
  };
  let fake: FakeProvider;
  let one: TestServer;
  let two: RunningServer;
  let serial = 0;
  const user = (name: string) => one.addUser(`${name}${++serial}`);

  const call = (server: { url: string }, token: string, method: string, path: string, body?: unknown, headers = {}) =>
    fetch(`${server.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as Record<string, unknown> }));

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    const model = { modelProvider: "openai-compatible", modelBaseUrl: fake.baseUrl, model: "fake-chat-1" } as const;
    one = await startTestServer({ ...redis, ...limits, ...model }, "postgres");
    // The second instance: the first's configuration (its schema, its Redis prefix), its own port.
    two = await startServer({ ...one.server.context.config, port: 0 });
  });
  afterAll(async () => {
    await two?.close();
    await one?.stop();
    await fake?.close();
  });

  it("replays an Idempotency-Key's first answer on the other instance", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    await call(one.server, alice.apiKey, "POST", "/network/request", { to: bob.username });
    await call(two, bob.apiKey, "POST", "/network/request", { to: alice.username });
    const body = { to: bob.username, message: "Exactly once, across instances." };
    const first = await call(one.server, alice.apiKey, "POST", "/agent/message", body, { "idempotency-key": "once" });
    expect(first.status).toBe(200);
    const again = await call(two, alice.apiKey, "POST", "/agent/message", body, { "idempotency-key": "once" });
    expect([again.status, again.body, again.headers.get("idempotent-replayed")]).toEqual([200, first.body, "true"]);
  });

  it("counts a user's chat runs over both instances: runs held on one take the slots on the other", async () => {
    const carol = await user("carol");
    const release = fake.hold();
    const running = Array.from({ length: MAX_RUNS_PER_USER }, () =>
      call(one.server, carol.apiKey, "POST", "/chat", { message: "Think slowly", stream: false }),
    );
    try {
      await fake.until(() => fake.inFlight === MAX_RUNS_PER_USER);
      const refused = await call(two, carol.apiKey, "POST", "/chat", { message: "One more", stream: false });
      expect([refused.status, refused.body.error]).toEqual([429, "rate_limited"]);
    } finally {
      release();
    }
    expect((await Promise.all(running)).map((r) => r.status)).toEqual(Array(MAX_RUNS_PER_USER).fill(200));
    // Given back when the runs ended: the other instance runs one now.
    expect((await call(two, carol.apiKey, "POST", "/chat", { message: "Now?", stream: false })).status).toBe(200);
  });

  it("revoking a key ends its sync connection and stream on the other instance at once, and refuses it there", async () => {
    const dave = await user("dave");
    const key = await createApiKey(one.server.context.db, { userId: dave.userId, scopes: ALL_SCOPES });
    const syncUrl = two.syncUrl;
    const workspace = await openDoc(syncUrl, key.apiKey, workspaceDocName(dave.userId));
    const stream = await fetch(`${two.url}/api/v1/agent/stream`, {
      headers: { authorization: `Bearer ${key.apiKey}`, accept: "text/event-stream" },
    });
    expect([workspace.outcome, stream.status]).toEqual(["synced", 200]);
    const reader = stream.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const ended = (async () => {
      for (;;) if ((await reader.read()).done) return Date.now();
    })();
    try {
      // Another process (the CLI) revokes it, and tells the instances through Redis.
      const revoked = await runCli(["keys", "revoke", key.keyId, "--database-url", one.databaseUrl as string], {
        TANDEM_REDIS_URL: redis.redisUrl,
        TANDEM_REDIS_PREFIX: redis.redisPrefix,
      });
      expect(revoked.code).toBe(0);
      const revokedAt = Date.now();
      // The stream's own look at its credential is 15 s away (streamPingMs): only the signal ends it this soon.
      const endedAt = await Promise.race([ended, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 1500))]);
      expect(endedAt - revokedAt).toBeLessThan(1500);
      await expect.poll(() => workspace.provider.isAuthenticated, { timeout: 1500, interval: 20 }).toBe(false);
    } finally {
      workspace.close();
      await reader.cancel().catch(() => {});
    }
    const reopened = await fetch(`${two.url}/api/v1/agent/stream`, { headers: { authorization: `Bearer ${key.apiKey}` } });
    expect(reopened.status).toBe(401);
    await reopened.body?.cancel();
    const again = await openDoc(syncUrl, key.apiKey, workspaceDocName(dave.userId));
    again.close();
    expect(again.outcome).toBe("refused");
  });

  it("shares rate limits: a burst, failed authentications and dead share tokens spent on one instance are spent on the other", async () => {
    const erin: TestUser = await user("erin");
    for (let i = 0; i < limits.rateLimitBurst; i++) {
      expect((await call(one.server, erin.apiKey, "GET", "/conversations")).status).toBe(200);
    }
    const limited = await call(two, erin.apiKey, "GET", "/conversations");
    expect([limited.status, limited.body.error]).toEqual([429, "rate_limited"]);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);

    const wrong = "svc_sk_nosuchkey000_wrongsecretwrongsecret";
    // Failures until the first refusal on one instance (an earlier test's 401 took its part of the budget)…
    const failures: number[] = [];
    while (failures.at(-1) !== 429 && failures.length <= limits.authFailureBurst) {
      failures.push((await call(one.server, wrong, "GET", "/conversations")).status);
    }
    expect(failures.at(-1)).toBe(429);
    // … and the other refuses too, though this address never failed there.
    expect((await call(two, wrong, "GET", "/conversations")).status).toBe(429);

    const guess = (server: { url: string }, i: number) =>
      fetch(`${server.url}/api/chat/guest-v04?token=Guess${String(i).padStart(5, "0")}&meta=true`).then((r) => r.status);
    for (let i = 0; i < limits.shareFailuresPerMinute; i++) expect(await guess(one.server, i)).toBe(404);
    expect(await guess(two, 99)).toBe(429);
  });
});
