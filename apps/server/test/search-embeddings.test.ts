import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { USER_MD } from "./search-fixtures";

/**
 * A fake OpenAI-compatible embeddings endpoint (`POST /v1/embeddings`, the real wire format).
 * Its vectors are a hashed bag of words in which synonyms share a word, so a query can match a
 * note by meaning without sharing a word with it, deterministically.
 */
const DIMENSIONS = 256;
const SYNONYMS: Record<string, string> = { automobile: "car", vehicle: "car", upkeep: "servicing", maintenance: "servicing" };
const IGNORED = new Set(["the", "a", "an", "and", "of", "my", "what", "are", "is", "to", "in", "for", "every"]);

function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (IGNORED.has(raw)) continue;
    const word = SYNONYMS[raw] ?? raw;
    let hash = 2166136261;
    for (const char of word) hash = Math.imul(hash ^ (char.codePointAt(0) as number), 16777619) >>> 0;
    vector[hash % DIMENSIONS] = (vector[hash % DIMENSIONS] as number) + 1;
  }
  return vector;
}

interface FakeProvider {
  url: string;
  mode: "ok" | "error";
  requests: { model: string; inputs: number; authorization: string | undefined }[];
  close(): Promise<void>;
}

async function startFakeProvider(): Promise<FakeProvider> {
  const fake: FakeProvider = { url: "", mode: "ok", requests: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/embeddings") {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(body) as { model: string; input: string | string[] };
      const inputs = Array.isArray(request.input) ? request.input : [request.input];
      fake.requests.push({ model: request.model, inputs: inputs.length, authorization: req.headers.authorization });
      res.setHeader("content-type", "application/json");
      if (fake.mode === "error") {
        res.writeHead(500).end(JSON.stringify({ error: { message: "model crashed", type: "server_error", code: null } }));
        return;
      }
      const tokens = inputs.reduce((sum, input) => sum + input.split(/\s+/).length, 0);
      res.end(
        JSON.stringify({
          object: "list",
          data: inputs.map((input, index) => ({ object: "embedding", index, embedding: fakeEmbedding(input) })),
          model: request.model,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}

/** A port nothing listens on: a provider that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const embeddingConfig = (baseUrl: string) => ({
  modelProvider: "openai-compatible" as const,
  modelBaseUrl: baseUrl,
  modelApiKey: "sk-test-embeddings",
  model: "fake-chat",
  embeddingModel: "fake-embed",
});

async function seedMemory(user: TestUser) {
  const result = await user.client.call("accumulate", {
    body: {
      files: [
        { path: "Memory/Self/USER.md", content: USER_MD },
        { path: "Memory/Garage/car.md", content: "Car servicing: change the engine oil every spring." },
        { path: "Workshop/car notes.md", content: "Car servicing checklist: engine oil, tyres, brakes." },
      ],
    },
  });
  expect(result.errors).toEqual([]);
}

describe.each(storages("search with embeddings"))("search with embeddings on %s", (storage) => {
  let fake: FakeProvider;
  let t: TestServer;
  let alice: TestUser;
  const memory = async (query: string) => (await alice.client.call("memorySearch", { body: { query } })).result.results;
  const notes = async (query: string) => (await alice.client.call("searchNotes", { body: { query } })).results;

  beforeAll(async () => {
    fake = await startFakeProvider();
    t = await startTestServer(embeddingConfig(fake.url), storage);
    alice = await t.addUser("alice");
    await seedMemory(alice);
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it("finds a note by meaning when it shares no word with the query, within the scope only", async () => {
    await expect
      .poll(async () => (await memory("automobile upkeep")).map((r) => r.path), { timeout: 10_000, interval: 100 })
      .toEqual(["Memory/Garage/car.md"]);
    // Notes search reaches the note outside Memory too; both are found by meaning alone.
    expect((await notes("automobile upkeep")).map((r) => r.title).sort()).toEqual(["car", "car notes"]);
    // The note bodies went to the provider in batches, with the configured model and key.
    expect(fake.requests.length).toBeGreaterThan(0);
    expect(fake.requests.every((r) => r.model === "fake-embed" && r.authorization === "Bearer sk-test-embeddings")).toBe(true);
  });

  it("keeps the lexical answer first where words match, with its section snippet", async () => {
    const results = await memory("what are my goals");
    expect(results[0]).toMatchObject({ path: "Memory/Self/USER.md" });
    expect(results[0]?.snippet).toContain("Run a marathon");
  });

  it("re-embeds a note whose body changes, in the background", async () => {
    const note = (await alice.client.call("createNote", { body: { title: "Errands", content: "wash the car on saturday" } })).result.note;
    await expect.poll(async () => (await notes("automobile")).map((r) => r.id), { timeout: 10_000, interval: 100 }).toContain(note.id);
    await alice.client.call("updateNote", { params: { id: note.id }, body: { content: "buy bread and milk" } });
    await expect.poll(async () => (await notes("automobile")).map((r) => r.id), { timeout: 10_000, interval: 100 }).not.toContain(note.id);
  });

  it("still answers a query of stop words only with nothing", async () => {
    expect(await memory("what is it")).toEqual([]);
  });
});

describe.each(storages())("search with a failing embedding provider on %s", (storage) => {
  it("answers by words when the provider is down", async () => {
    const t = await startTestServer(embeddingConfig(`http://127.0.0.1:${await closedPort()}/v1`), storage);
    try {
      const alice = await t.addUser("alice");
      await seedMemory(alice);
      const results = (await alice.client.call("memorySearch", { body: { query: "what are my goals" } })).result.results;
      expect(results.map((r) => r.path)).toEqual(["Memory/Self/USER.md"]);
      expect((await alice.client.call("memorySearch", { body: { query: "automobile upkeep" } })).result.results).toEqual([]);
    } finally {
      await t.stop();
    }
  });

  it("answers by words when the provider answers errors", async () => {
    const fake = await startFakeProvider();
    fake.mode = "error";
    const t = await startTestServer(embeddingConfig(fake.url), storage);
    try {
      const alice = await t.addUser("alice");
      await seedMemory(alice);
      const first = await alice.client.raw("searchNotes", { body: { query: "engine oil" } });
      expect(first.status).toBe(200);
      expect((first.body as { results: { title: string }[] }).results.map((r) => r.title).sort()).toEqual(["car", "car notes"]);
      expect(fake.requests.length).toBeGreaterThan(0);
      // Paused after the failure: the next searches do not even ask the provider.
      const asked = fake.requests.length;
      for (let i = 0; i < 5; i++) expect((await alice.client.call("searchNotes", { body: { query: "tyres" } })).results).toHaveLength(1);
      expect(fake.requests.length).toBe(asked);
    } finally {
      await t.stop();
      await fake.close();
    }
  });
});
