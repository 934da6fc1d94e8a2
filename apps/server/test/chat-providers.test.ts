import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ChatLine, chat } from "./agent/chat-client";
import { startFakeAnthropic } from "./fakes/fake-anthropic";
import { type FakeProvider, startFakeOpenAI } from "./fakes/fake-openai";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/** Reads a chat stream line by line as it arrives; `stopWhen` decides when to hang up. */
async function chatUntil(t: TestServer, apiKey: string, body: Record<string, unknown>, stopWhen: (line: ChatLine) => boolean) {
  const controller = new AbortController();
  const response = await t.fetch("/api/v1/chat", {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const lines: ChatLine[] = [];
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    const parsed = parts.filter(Boolean).map((line) => JSON.parse(line) as ChatLine);
    lines.push(...parsed);
    if (parsed.some(stopWhen)) {
      controller.abort();
      break;
    }
  }
  return lines;
}

async function waitFor<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("chat through an OpenAI-compatible provider (fake server speaking the wire format)", () => {
  let fake: FakeProvider;
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startTestServer({
      modelProvider: "openai-compatible",
      modelBaseUrl: fake.baseUrl,
      model: "fake-chat-1",
      agentProgressMs: 100,
      agentTimeoutMs: 2500,
    });
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    await alice.client.call("createNote", { body: { title: "Project Atlas", content: "The Atlas launch is planned for March 3." } });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });
  beforeEach(() => {
    expect(fake.pending).toBe(0);
  });

  const conversationCount = async (user: TestUser) =>
    (await user.client.call("listConversations", { query: { view: "me", limit: 100 } })).conversations?.length ?? 0;

  it("streams the provider's text and sends it the instructions, the toolset and the temperature", async () => {
    fake.enqueue({ text: "Hello from the provider." });
    const before = fake.requests.length;
    const reply = await chat(t, alice.apiKey, { message: "Say hello", temperature: 0.3 });
    expect(reply.text).toBe("Hello from the provider.");
    expect(reply.lines.at(-1)).toMatchObject({
      type: "completion",
      status: "completed",
      metadata: { model: "default", modelId: "fake-chat-1" },
    });
    const sent = fake.requests[before];
    expect(sent?.model).toBe("fake-chat-1");
    expect(sent?.temperature).toBe(0.3);
    const tools = ((sent?.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(tools).toEqual(expect.arrayContaining(["search_notes", "get_note_content", "list_todos", "create_todo"]));
    const messages = sent?.messages as { role: string; content: string }[];
    expect(messages[0]?.role).toBe("system");
    expect(messages[0]?.content).toMatch(/Context: today=\d{4}-\d{2}-\d{2}; timezone=UTC/);
    expect(messages.at(-1)).toMatchObject({ role: "user", content: "Say hello" });
  });

  it("runs the tools the model calls and gives it their results", async () => {
    fake.enqueue({ toolCalls: [{ name: "search_notes", args: { query: "Atlas launch" } }] }, { text: "The launch is on March 3." });
    const before = fake.requests.length;
    const reply = await chat(t, alice.apiKey, { message: "When is the launch?" });
    expect(reply.lines.filter((l) => l.type.startsWith("tool-call")).map((l) => [l.type, l.toolName, l.ok])).toEqual([
      ["tool-call-start", "search_notes", undefined],
      ["tool-call-end", "search_notes", true],
    ]);
    expect(reply.text).toBe("The launch is on March 3.");
    const second = JSON.stringify(fake.requests[before + 1]?.messages);
    expect(second).toContain("Project Atlas");
  });

  it("tells the model when its tool arguments fail the schema, and carries on", async () => {
    fake.enqueue({ toolCalls: [{ name: "get_note_content", args: { noteId: "not a number" } }] }, { text: "I could not read it." });
    const before = fake.requests.length;
    const reply = await chat(t, alice.apiKey, { message: "Read the note" });
    expect(reply.lines.find((l) => l.type === "tool-call-end")).toMatchObject({ ok: false });
    expect(reply.lines.at(-1)).toMatchObject({ status: "completed" });
    const toolMessage = ((fake.requests[before + 1]?.messages ?? []) as { role: string; content: string }[]).find((m) => m.role === "tool");
    expect(toolMessage?.content).toMatch(/noteId|invalid|expected/i);
  });

  it("answers a provider error with an error line and a clean end, storing nothing", async () => {
    for (const failure of [
      [{ httpError: { status: 500 } }, { httpError: { status: 500 } }],
      [{ errorMidStream: true, textBefore: "Partial answer", message: "overloaded" }],
      [{ garbage: true }],
    ] as const) {
      const before = await conversationCount(alice);
      fake.enqueue(...failure);
      const reply = await chat(t, alice.apiKey, { message: "This will fail" });
      expect(reply.status).toBe(200);
      const error = reply.lines.find((l) => l.type === "error");
      expect(error?.error).toMatch(/model provider/);
      expect(String(error?.error)).not.toMatch(/127\.0\.0\.1|api key/i);
      expect(reply.lines.at(-1)).toMatchObject({ type: "completion", status: "failed", messageId: null });
      expect(await conversationCount(alice)).toBe(before);
    }
  });

  it("answers 502 with stream false when the provider fails", async () => {
    fake.enqueue({ httpError: { status: 503 } }, { httpError: { status: 503 } });
    const response = await t.fetch("/api/v1/chat", {
      method: "POST",
      headers: { Authorization: `Bearer ${alice.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ message: "fail", stream: false }),
    });
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ success: false, error: "model_failed" });
  });

  it("strips <think> blocks from the answer, even split across chunks", async () => {
    fake.enqueue({ text: "<think>I should be careful here</think>The answer is 4." });
    const reply = await chat(t, alice.apiKey, { message: "2+2?" });
    expect(reply.text).toBe("The answer is 4.");
  });

  it("stops the run when the client goes away, and stores the partial answer marked incomplete", async () => {
    fake.enqueue({ stall: true, textBefore: "Let me think about" });
    const lines = await chatUntil(t, alice.apiKey, { message: "A long question" }, (line) => line.type === "text-delta");
    const conversationId = lines[0]?.conversationId as number;
    const read = await waitFor(
      () => alice.client.call("getConversation", { params: { id: conversationId } }),
      (r) => r.conversation.messages.length === 2,
    );
    expect(read.conversation.messages.map((m) => [m.role, m.status])).toEqual([
      ["user", "complete"],
      ["assistant", "incomplete"],
    ]);
    expect(read.conversation.messages[1]?.content.trim()).toBe("Let me think about");
  });

  it("sends progress lines while the model is silent, and ends at the time limit with what it had", async () => {
    fake.enqueue({ stall: true, textBefore: "Working on" });
    const reply = await chat(t, alice.apiKey, { message: "Slow one" });
    expect(reply.lines.filter((l) => l.type === "pipeline-progress").length).toBeGreaterThan(2);
    expect(reply.lines.find((l) => l.type === "error")?.error).toMatch(/ran out of time/);
    expect(reply.lines.at(-1)).toMatchObject({ type: "completion", status: "incomplete" });
  });

  it("keeps concurrent chats independent: a stalled one blocks neither the same user nor another", async () => {
    fake.enqueue({ stall: true });
    const stalled = chat(t, alice.apiKey, { message: "stall" });
    const [mine, theirs] = await Promise.all([
      chat(t, alice.apiKey, { message: "hello", model: "local" }),
      chat(t, bob.apiKey, { message: "hello", model: "local" }),
    ]);
    expect(mine.lines.at(-1)).toMatchObject({ status: "completed", metadata: { model: "local", modelId: "tandem-local" } });
    expect(theirs.lines.at(-1)).toMatchObject({ status: "completed" });
    expect((await stalled).lines.at(-1)).toMatchObject({ status: "incomplete" });
  });

  it("records token usage per user and per key", async () => {
    const carol = await t.addUser("carol");
    fake.enqueue({ toolCalls: [{ name: "list_folders", args: {} }], usage: { promptTokens: 100, completionTokens: 5 } });
    fake.enqueue({ text: "Counted.", usage: { promptTokens: 120, completionTokens: 7 } });
    await chat(t, carol.apiKey, { message: "count me" });
    const response = await t.fetch("/api/v1/agent/usage", { headers: { Authorization: `Bearer ${carol.apiKey}` } });
    const { usage } = (await response.json()) as {
      usage: { byPurpose: { purpose: string; promptTokens: number; calls: number }[]; byKey: { apiKeyId: string; calls: number }[] };
    };
    const chatUsage = usage.byPurpose.find((row) => row.purpose === "chat");
    expect(chatUsage?.promptTokens).toBe(220);
    // One row per model call, under the key that asked.
    expect(chatUsage?.calls).toBe(2);
    expect(usage.byKey).toHaveLength(1);
  });
});

describe("chat when the model provider is down", () => {
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    // A port nothing listens on: the provider refuses the connection.
    const closed = await startFakeOpenAI();
    await closed.close();
    t = await startTestServer({ modelProvider: "openai-compatible", modelBaseUrl: closed.baseUrl, model: "gone" });
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  it("says the provider can't be reached, ends the stream cleanly and stores nothing", async () => {
    const reply = await chat(t, alice.apiKey, { message: "anyone there?" });
    expect(reply.lines.find((l) => l.type === "error")?.error).toBe("The model provider can't be reached.");
    expect(reply.lines.at(-1)).toMatchObject({ type: "completion", status: "failed" });
    expect((await alice.client.call("listConversations", {})).total).toBe(0);
  });
});

describe("chat through the Anthropic Messages API (fake server speaking the wire format)", () => {
  let fake: FakeProvider;
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: "sk-ant-test" });
    t = await startTestServer({ modelProvider: "anthropic", modelBaseUrl: fake.baseUrl, modelApiKey: "sk-ant-test", model: "claude-fake" });
    alice = await t.addUser("alice");
    await alice.client.call("init");
    await alice.client.call("createNote", { body: { title: "Project Atlas", content: "The Atlas launch is planned for March 3." } });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it("streams text and runs tool calls", async () => {
    fake.enqueue({ toolCalls: [{ name: "search_notes", args: { query: "Atlas" } }] }, { text: "March 3, per Project Atlas." });
    const reply = await chat(t, alice.apiKey, { message: "When is the launch?" });
    expect(reply.lines.filter((l) => l.type === "tool-call-start").map((l) => l.toolName)).toEqual(["search_notes"]);
    expect(reply.text).toBe("March 3, per Project Atlas.");
    expect(JSON.stringify(fake.requests.at(-1)?.messages)).toContain("Project Atlas");
    expect(fake.headers.at(-1)?.["x-api-key"]).toBe("sk-ant-test");
  });
});
