import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { APICallError, generateText, jsonSchema, stepCountIs, streamText, type TextStreamPart, type ToolSet, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertModelConfig, LOCAL_MODEL_ID, ModelCatalog, type ModelConfig } from "../src/agent/models/model-catalog";
import { ConfigError } from "../src/config";
import { ApiError } from "../src/http/errors";
import { startFakeAnthropic } from "./fakes/fake-anthropic";
import { startFakeOpenAI } from "./fakes/fake-openai";
import { type FakeProvider, textDeltas } from "./fakes/fake-provider";
import { runCli } from "./harness";

const API_KEY = "sk-fake-0123456789abcdef";

/** A tiny model of our own for the `local` alias: answers "local answer" to anything. */
function tinyLocalModel(): LanguageModelV4 {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 2, text: 2, reasoning: undefined },
  };
  const parts: LanguageModelV4StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "t" },
    { type: "text-delta", id: "t", delta: "local " },
    { type: "text-delta", id: "t", delta: "answer" },
    { type: "text-end", id: "t" },
    { type: "finish", usage, finishReason: { unified: "stop", raw: "stop" } },
  ];
  return {
    specificationVersion: "v4",
    provider: "tiny",
    modelId: "tiny-local",
    supportedUrls: {},
    doGenerate: async () => ({
      content: [{ type: "text", text: "local answer" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    }),
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    }),
  };
}

const noLocalModel = () => {
  throw new Error("the local model is not used in this test");
};

type Part = TextStreamPart<ToolSet>;

/** Reads a whole stream, failing the test rather than hanging if it never ends. */
async function collect(stream: AsyncIterable<Part>, withinMs = 5_000): Promise<Part[]> {
  const parts: Part[] = [];
  const read = (async () => {
    for await (const part of stream) parts.push(part);
  })();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream did not end within ${withinMs} ms`)), withinMs);
  });
  try {
    await Promise.race([read, timeout]);
  } finally {
    clearTimeout(timer);
  }
  return parts;
}

/** The error of the stream's first error part; fails the test when there is none. */
function firstError(parts: Part[]): unknown {
  const part = parts.find((p) => p.type === "error");
  if (!part) throw new Error(`no error part among ${parts.map((p) => p.type).join(", ")}`);
  return part.error;
}

const ofType = <T extends Part["type"]>(parts: Part[], type: T) => parts.filter((p): p is Extract<Part, { type: T }> => p.type === type);

interface ProviderCase {
  name: "openai-compatible" | "anthropic";
  start: typeof startFakeOpenAI;
  /** The tool result as the second request carries it back to the model. */
  toolResultIn(request: Record<string, unknown>): { callId: string; content: string } | undefined;
  /** The tools the first request offered, by name. */
  toolNames(request: Record<string, unknown>): string[];
}

const CASES: ProviderCase[] = [
  {
    name: "openai-compatible",
    start: startFakeOpenAI,
    toolResultIn: (request) => {
      const messages = request.messages as { role: string; tool_call_id?: string; content?: string }[];
      const result = messages.find((m) => m.role === "tool");
      return result && { callId: result.tool_call_id as string, content: String(result.content) };
    },
    toolNames: (request) => (request.tools as { function: { name: string } }[]).map((t) => t.function.name),
  },
  {
    name: "anthropic",
    start: startFakeAnthropic,
    toolResultIn: (request) => {
      const messages = request.messages as { role: string; content: { type: string; tool_use_id?: string; content?: unknown }[] }[];
      const block = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === "tool_result");
      return block && { callId: block.tool_use_id as string, content: JSON.stringify(block.content) };
    },
    toolNames: (request) => (request.tools as { name: string }[]).map((t) => t.name),
  },
];

describe.each(CASES)("the $name provider through ModelCatalog and streamText", (provider) => {
  let fake: FakeProvider;
  let catalog: ModelCatalog;

  beforeAll(async () => {
    fake = await provider.start({ apiKey: API_KEY });
    catalog = new ModelCatalog(
      { modelProvider: provider.name, modelBaseUrl: fake.baseUrl, modelApiKey: API_KEY, model: "fake-default", modelFast: "fake-fast" },
      tinyLocalModel,
    );
  });
  afterAll(() => fake.close());

  /**
   * streamText on a model of the catalog, with the SDK's retries off (the fakes answer at once), errors
   * kept in the stream rather than logged, and an output limit (Anthropic requires one).
   */
  const stream = (options: Omit<Parameters<typeof streamText>[0], "model"> & { model?: string }) =>
    streamText({
      maxRetries: 0,
      maxOutputTokens: 1024,
      onError: () => {},
      prompt: "Hello",
      ...options,
      model: catalog.resolve(options.model).model,
    } as Parameters<typeof streamText>[0]);

  it("streams text deltas in order, from the model the alias names, with the API key", async () => {
    const text = "Hello there, this answer arrives word by word.";
    fake.enqueue({ text });
    const result = stream({ model: "fast" });
    const parts = await collect(result.fullStream);
    expect(ofType(parts, "text-delta").map((p) => p.text)).toEqual(textDeltas(text));
    expect(await result.text).toBe(text);
    const request = fake.requests.at(-1);
    expect(request).toMatchObject({ model: "fake-fast", stream: true });
    const headers = fake.headers.at(-1);
    if (provider.name === "anthropic") expect(headers?.["x-api-key"]).toBe(API_KEY);
    else expect(headers?.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("reassembles a tool call split across chunks, runs the tool and sends its result back", async () => {
    const executed: unknown[] = [];
    const tools = {
      add_todo: tool({
        description: "Adds a todo",
        inputSchema: jsonSchema<{ title: string; due?: string }>({
          type: "object",
          properties: { title: { type: "string" }, due: { type: "string" } },
          required: ["title"],
          additionalProperties: false,
        }),
        execute: async (input) => {
          executed.push(input);
          return { created: true, id: 7 };
        },
      }),
    };
    const args = { title: "Buy oat milk for the office", due: "2026-03-02" };
    fake.enqueue({ toolCalls: [{ name: "add_todo", args, id: "call_42" }], usage: { promptTokens: 30, completionTokens: 10 } });
    fake.enqueue({ text: "Added it.", usage: { promptTokens: 50, completionTokens: 4 } });
    const before = fake.requests.length;
    const result = stream({ tools, stopWhen: stepCountIs(3) });
    const parts = await collect(result.fullStream);

    expect(ofType(parts, "tool-input-delta").length).toBeGreaterThan(1);
    const calls = ofType(parts, "tool-call");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ toolName: "add_todo", toolCallId: "call_42", input: args });
    expect(executed).toEqual([args]);
    expect(ofType(parts, "tool-result")[0]).toMatchObject({ toolCallId: "call_42", output: { created: true, id: 7 } });
    expect(await result.text).toBe("Added it.");

    const [first, second] = fake.requests.slice(before);
    expect(provider.toolNames(first as Record<string, unknown>)).toEqual(["add_todo"]);
    const sent = provider.toolResultIn(second as Record<string, unknown>);
    expect(sent?.callId).toBe("call_42");
    expect(sent?.content).toContain("created");
    expect(await result.totalUsage).toMatchObject({ inputTokens: 80, outputTokens: 14, totalTokens: 94 });
  });

  it("maps the provider's token usage", async () => {
    fake.enqueue({ text: "Counted.", usage: { promptTokens: 123, completionTokens: 45 } });
    const result = stream({});
    await collect(result.fullStream);
    expect(await result.usage).toMatchObject({ inputTokens: 123, outputTokens: 45, totalTokens: 168 });
  });

  it("passes the temperature through", async () => {
    const result = stream({ temperature: 0.3 });
    await collect(result.fullStream);
    expect(fake.requests.at(-1)?.temperature).toBe(0.3);
  });

  for (const status of [500, 429]) {
    it(`surfaces an HTTP ${status} as an error part, without hanging`, async () => {
      fake.enqueue({ httpError: { status, headers: status === 429 ? { "retry-after": "1" } : {} } });
      const parts = await collect(stream({}).fullStream);
      expect(ofType(parts, "error")).toHaveLength(1);
      const error = firstError(parts);
      expect(APICallError.isInstance(error)).toBe(true);
      expect((error as APICallError).statusCode).toBe(status);
      expect(ofType(parts, "text-delta")).toEqual([]);
    });
  }

  it("a refused API key is an error that does not carry the key", async () => {
    const wrong = new ModelCatalog(
      { modelProvider: provider.name, modelBaseUrl: fake.baseUrl, modelApiKey: "sk-wrong-key-987654", model: "fake-default" },
      noLocalModel,
    );
    const result = streamText({ model: wrong.resolve().model, prompt: "Hi", maxRetries: 0, maxOutputTokens: 1024, onError: () => {} });
    const error = firstError(await collect(result.fullStream));
    expect((error as APICallError).statusCode).toBe(401);
    const shown = `${String(error)} ${JSON.stringify(error)}`;
    expect(shown).not.toContain("sk-wrong-key-987654");
  });

  it("surfaces an error event mid-stream as an error part after the partial text", async () => {
    fake.enqueue({ errorMidStream: true, textBefore: "A partial", message: "upstream overloaded" });
    const parts = await collect(stream({}).fullStream);
    const deltas = ofType(parts, "text-delta").map((p) => p.text);
    expect(deltas).toEqual(textDeltas("A partial"));
    expect(parts.findIndex((p) => p.type === "error")).toBeGreaterThan(parts.findLastIndex((p) => p.type === "text-delta"));
    expect((firstError(parts) as Error).message).toBe("upstream overloaded");
  });

  it("surfaces a stream that is not JSON as an error", async () => {
    fake.enqueue({ garbage: true });
    const parts = await collect(stream({}).fullStream);
    expect(firstError(parts)).toBeInstanceOf(Error);
  });

  it("ends a stalled stream promptly when the abort signal fires", async () => {
    fake.enqueue({ stall: true, textBefore: "par" });
    const started = Date.now();
    const parts = await collect(stream({ abortSignal: AbortSignal.timeout(300) }).fullStream);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(ofType(parts, "text-delta").map((p) => p.text)).toEqual(["par"]);
    expect(parts.at(-1)?.type).toBe("abort");
  });

  it("answers generateText (no stream) with text and usage", async () => {
    fake.enqueue({ text: "A whole answer.", usage: { promptTokens: 12, completionTokens: 3 } });
    const result = await generateText({ model: catalog.resolve().model, prompt: "Hi", maxRetries: 0, maxOutputTokens: 1024 });
    expect(result.text).toBe("A whole answer.");
    expect(result.usage).toMatchObject({ inputTokens: 12, outputTokens: 3, totalTokens: 15 });
    expect(fake.requests.at(-1)?.stream).not.toBe(true);
  });

  it("in fixed mode, answers every request at once with the same reply and records nothing", async () => {
    const fixed = await provider.start({ fixed: { text: "Fixed answer." } });
    try {
      const model = new ModelCatalog(
        { modelProvider: provider.name, modelBaseUrl: fixed.baseUrl, modelApiKey: API_KEY, model: "fake-default" },
        noLocalModel,
      ).resolve().model;
      fixed.enqueue({ httpError: { status: 500 } });
      for (let run = 0; run < 2; run += 1) {
        expect(await streamText({ model, prompt: "Hi", maxRetries: 0, maxOutputTokens: 1024 }).text).toBe("Fixed answer.");
      }
      expect(fixed.requests).toEqual([]);
    } finally {
      await fixed.close();
    }
  });

  it("answers `local` with the local model whatever the provider", async () => {
    const resolved = catalog.resolve("local");
    expect(resolved).toMatchObject({ alias: "local", provider: "local", modelId: LOCAL_MODEL_ID });
    const before = fake.requests.length;
    const result = streamText({ model: resolved.model, prompt: "Hi" });
    expect(await result.text).toBe("local answer");
    expect(fake.requests.length).toBe(before);
  });
});

describe("ModelCatalog", () => {
  const remote: ModelConfig = {
    modelProvider: "openai-compatible",
    modelBaseUrl: "http://127.0.0.1:9/v1",
    modelApiKey: undefined,
    model: "llama3.1:8b",
    modelFast: "llama3.2:3b",
    modelSmart: undefined,
  };

  it("resolves the default for nothing or an empty string, each alias, and a configured model id", () => {
    const catalog = new ModelCatalog(remote, noLocalModel);
    for (const requested of [undefined, "", "default"]) {
      expect(catalog.resolve(requested)).toMatchObject({ alias: "default", provider: "openai-compatible", modelId: "llama3.1:8b" });
    }
    expect(catalog.resolve("fast")).toMatchObject({ alias: "fast", modelId: "llama3.2:3b" });
    expect(catalog.resolve("smart")).toMatchObject({ alias: "smart", modelId: "llama3.1:8b" });
    expect(catalog.resolve("llama3.2:3b")).toMatchObject({ alias: "fast", modelId: "llama3.2:3b" });
    expect(catalog.resolve("llama3.1:8b")).toMatchObject({ alias: "default" });
    expect(catalog.resolve().model.modelId).toBe("llama3.1:8b");
    expect(catalog.list()).toEqual([
      { alias: "default", provider: "openai-compatible", modelId: "llama3.1:8b" },
      { alias: "fast", provider: "openai-compatible", modelId: "llama3.2:3b" },
      { alias: "smart", provider: "openai-compatible", modelId: "llama3.1:8b" },
      { alias: "local", provider: "local", modelId: LOCAL_MODEL_ID },
    ]);
  });

  it("refuses an unknown model with 400 invalid_model naming the aliases", () => {
    const catalog = new ModelCatalog(remote, noLocalModel);
    for (const requested of ["gpt-9", "Default", "llama3.1"]) {
      let error: unknown;
      try {
        catalog.resolve(requested);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 400, code: "invalid_model" });
      expect((error as Error).message).toContain(requested);
      expect((error as Error).message).toContain("default, fast, smart, local");
    }
  });

  it("with the local provider, answers every alias with the local model, built once and only when used", () => {
    let built = 0;
    const catalog = new ModelCatalog({ ...remote, modelProvider: "local", modelBaseUrl: undefined, model: undefined }, () => {
      built += 1;
      return tinyLocalModel();
    });
    expect(catalog.list().map((m) => [m.alias, m.provider, m.modelId])).toEqual([
      ["default", "local", LOCAL_MODEL_ID],
      ["fast", "local", LOCAL_MODEL_ID],
      ["smart", "local", LOCAL_MODEL_ID],
      ["local", "local", LOCAL_MODEL_ID],
    ]);
    expect(built).toBe(0);
    for (const requested of [undefined, "fast", "smart", "local", LOCAL_MODEL_ID]) {
      expect(catalog.resolve(requested)).toMatchObject({ provider: "local", modelId: LOCAL_MODEL_ID });
      expect(catalog.resolve(requested).model.provider).toBe("tiny");
    }
    expect(built).toBe(1);
    expect(() => catalog.resolve("llama3.1:8b")).toThrow(ApiError);
  });

  it("refuses a remote provider without what it needs, naming the settings and never the key", () => {
    const fails = (config: Partial<ModelConfig>) => {
      const full = { ...remote, ...config };
      expect(() => assertModelConfig(full)).toThrow(ConfigError);
      expect(() => new ModelCatalog(full, noLocalModel)).toThrow(ConfigError);
      try {
        assertModelConfig(full);
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    };
    expect(fails({ modelBaseUrl: undefined })).toContain("TANDEM_MODEL_BASE_URL");
    expect(fails({ model: undefined })).toContain("TANDEM_MODEL ");
    const anthropic = fails({ modelProvider: "anthropic", modelApiKey: undefined });
    expect(anthropic).toContain("TANDEM_MODEL_API_KEY");
    expect(anthropic).not.toContain("TANDEM_MODEL_BASE_URL");
    expect(fails({ modelProvider: "anthropic", modelApiKey: "sk-secret-1", model: undefined })).not.toContain("sk-secret-1");
    // Anthropic's base URL is optional; the local provider needs nothing.
    expect(() => assertModelConfig({ ...remote, modelProvider: "anthropic", modelBaseUrl: undefined, modelApiKey: "k" })).not.toThrow();
    expect(() => assertModelConfig({ ...remote, modelProvider: "local", modelBaseUrl: undefined, model: undefined })).not.toThrow();
  });

  it("stops `serve` at start with one line naming what is missing, before creating storage", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "tandem-model-config-"));
    try {
      const { code, stderr } = await runCli(["serve", "--port", "0", "--data-dir", dataDir], {
        TANDEM_MODEL_PROVIDER: "openai-compatible",
        TANDEM_MODEL: "llama3.1:8b",
        TANDEM_MODEL_API_KEY: "sk-never-printed",
      });
      expect(code).toBe(1);
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toContain("TANDEM_MODEL_BASE_URL");
      expect(stderr).not.toContain("sk-never-printed");
      expect(await readdir(dataDir)).toEqual([]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
