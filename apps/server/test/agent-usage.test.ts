import { ALL_SCOPES } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordModelUsage } from "../src/agent/usage/model-usage";
import { createApiKey, listApiKeys } from "../src/auth/api-keys";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

const DAY_MS = 24 * 60 * 60 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

describe.each(storages("agent usage"))("GET /agent/usage on %s", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let aliceKeyId: string;
  let laptopKeyId: string;

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    const { db } = t.server.context;
    aliceKeyId = (await listApiKeys(db, alice.userId))[0]?.keyId as string;
    laptopKeyId = (await createApiKey(db, { userId: alice.userId, scopes: ALL_SCOPES, label: "laptop" })).keyId;
    const bobKeyId = (await listApiKeys(db, bob.userId))[0]?.keyId as string;
    const call = { provider: "openai-compatible", model: "llama3.1:8b" };
    // Alice: two chats under her first key, a briefing on another model under her laptop key, a
    // heartbeat the server ran (no key), one with counts the provider left out, and one too old to count.
    await recordModelUsage(db, {
      ...call,
      userId: alice.userId,
      apiKeyId: aliceKeyId,
      purpose: "chat",
      promptTokens: 100,
      completionTokens: 20,
    });
    await recordModelUsage(db, {
      ...call,
      userId: alice.userId,
      apiKeyId: aliceKeyId,
      purpose: "chat",
      promptTokens: 50,
      completionTokens: 10,
    });
    await recordModelUsage(db, {
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      userId: alice.userId,
      apiKeyId: laptopKeyId,
      purpose: "briefing",
      promptTokens: 1000,
      completionTokens: 300,
    });
    await recordModelUsage(db, {
      ...call,
      userId: alice.userId,
      apiKeyId: null,
      purpose: "heartbeat",
      promptTokens: 7,
      completionTokens: 3,
    });
    await recordModelUsage(db, {
      ...call,
      userId: alice.userId,
      apiKeyId: aliceKeyId,
      purpose: "chat",
      promptTokens: undefined,
      completionTokens: undefined,
    });
    await recordModelUsage(db, {
      ...call,
      userId: alice.userId,
      apiKeyId: aliceKeyId,
      purpose: "chat",
      promptTokens: 5000,
      completionTokens: 5000,
      at: daysAgo(40),
    });
    // Bob: his own call, and a row naming Alice's laptop key (which must not lend him its label).
    await recordModelUsage(db, { ...call, userId: bob.userId, apiKeyId: bobKeyId, purpose: "chat", promptTokens: 9, completionTokens: 1 });
    await recordModelUsage(db, {
      ...call,
      userId: bob.userId,
      apiKeyId: laptopKeyId,
      purpose: "summary",
      promptTokens: 2,
      completionTokens: 2,
    });
  });
  afterAll(() => t.stop());

  it("counts the caller's calls of the last 30 days, in total and by model, purpose and key", async () => {
    const answer = await alice.client.call("getAgentUsage");
    expect(Date.parse(answer.since)).toBeGreaterThan(daysAgo(30).getTime() - 60_000);
    expect(answer.usage.total).toEqual({ promptTokens: 1157, completionTokens: 333, totalTokens: 1490, calls: 5 });
    expect(answer.usage.byModel).toEqual([
      { provider: "anthropic", model: "claude-sonnet-4-5", promptTokens: 1000, completionTokens: 300, totalTokens: 1300, calls: 1 },
      { provider: "openai-compatible", model: "llama3.1:8b", promptTokens: 157, completionTokens: 33, totalTokens: 190, calls: 4 },
    ]);
    expect(answer.usage.byPurpose).toEqual([
      { purpose: "briefing", promptTokens: 1000, completionTokens: 300, totalTokens: 1300, calls: 1 },
      { purpose: "chat", promptTokens: 150, completionTokens: 30, totalTokens: 180, calls: 3 },
      { purpose: "heartbeat", promptTokens: 7, completionTokens: 3, totalTokens: 10, calls: 1 },
    ]);
    expect(answer.usage.byKey).toEqual([
      { apiKeyId: laptopKeyId, label: "laptop", promptTokens: 1000, completionTokens: 300, totalTokens: 1300, calls: 1 },
      { apiKeyId: aliceKeyId, label: null, promptTokens: 150, completionTokens: 30, totalTokens: 180, calls: 3 },
      { apiKeyId: null, label: null, promptTokens: 7, completionTokens: 3, totalTokens: 10, calls: 1 },
    ]);
  });

  it("counts from `since`, a date or a date-time", async () => {
    const older = await alice.client.call("getAgentUsage", { query: { since: daysAgo(60).toISOString().slice(0, 10) } });
    expect(older.usage.total).toMatchObject({ totalTokens: 11_490, calls: 6 });
    const future = await alice.client.call("getAgentUsage", { query: { since: "2999-01-01T00:00:00+02:00" } });
    expect(future).toMatchObject({ since: "2998-12-31T22:00:00.000Z", usage: { byModel: [], byPurpose: [], byKey: [] } });
    expect(future.usage.total).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0, calls: 0 });
  });

  it("shows another user only their own rows, and never a label of someone else's key", async () => {
    const answer = await bob.client.call("getAgentUsage");
    expect(answer.usage.total).toEqual({ promptTokens: 11, completionTokens: 3, totalTokens: 14, calls: 2 });
    expect(answer.usage.byKey.map((k) => k.label)).toEqual([null, null]);
    expect(answer.usage.byPurpose.map((p) => p.purpose)).toEqual(["chat", "summary"]);
  });

  it("refuses a `since` that is not an ISO date with 400", async () => {
    for (const since of ["yesterday", "2026-13-01", "March 7"]) {
      const result = await alice.client.raw("getAgentUsage", { query: { since } });
      expect(result.status, since).toBe(400);
      expect(JSON.stringify(result.body)).toContain("ISO 8601");
    }
  });

  it("needs a user's key, of any scope", async () => {
    expect((await t.anonymous.raw("getAgentUsage")).status).toBe(401);
    const carol = await t.addUser("carol", []);
    expect((await carol.client.raw("getAgentUsage")).status).toBe(200);
    expect((await carol.client.raw("listAgentModels")).status).toBe(200);
  });

  it("lists the local model behind every alias by default", async () => {
    expect(await alice.client.call("listAgentModels")).toEqual({
      success: true,
      provider: "local",
      defaultAlias: "default",
      models: ["default", "fast", "smart", "local"].map((alias) => ({ alias, provider: "local", modelId: "tandem-local" })),
    });
  });
});

describe("GET /agent/models with a remote provider", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({
      modelProvider: "openai-compatible",
      // Nothing listens here: listing the models contacts no provider.
      modelBaseUrl: "http://127.0.0.1:9/v1",
      modelApiKey: "sk-listing-never-shows-this",
      model: "llama3.1:8b",
      modelFast: "llama3.2:3b",
    });
  });
  afterAll(() => t.stop());

  it("names each alias's provider and model id, and never the key", async () => {
    const alice = await t.addUser("alice");
    const result = await alice.client.raw("listAgentModels");
    expect(result.body).toEqual({
      success: true,
      provider: "openai-compatible",
      defaultAlias: "default",
      models: [
        { alias: "default", provider: "openai-compatible", modelId: "llama3.1:8b" },
        { alias: "fast", provider: "openai-compatible", modelId: "llama3.2:3b" },
        { alias: "smart", provider: "openai-compatible", modelId: "llama3.1:8b" },
        { alias: "local", provider: "local", modelId: "tandem-local" },
      ],
    });
    expect(JSON.stringify(result.body)).not.toContain("sk-listing");
  });
});
