import { rm } from "node:fs/promises";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeOpenAI } from "../../../../server/test/fakes/fake-openai";
import { signInAs, startTestHost, tempDir, waitFor } from "../../../test/host-harness";
import type { ChatEvent, ChatProgress } from "../../shared/desktop-api";
import type { Host } from "../host";

/** Reads a reply to its end as the renderer does: readChat again at once, from where the last answer stopped. */
async function readAll(host: Host, chatId: string): Promise<{ events: ChatEvent[]; ending: NonNullable<ChatProgress["ended"]> }> {
  const events: ChatEvent[] = [];
  for (;;) {
    const progress = await host.api.readChat({ chatId, after: events.length });
    events.push(...progress.events);
    expect(progress.next).toBe(events.length);
    if (progress.ended) return { events, ending: progress.ended };
  }
}

const answerOf = (events: ChatEvent[]) =>
  events
    .filter((event) => event.type === "text-delta")
    .map((event) => event.textDelta)
    .join("");

/** Against a real server with its embedded local agent: chat through the host, conversations, the briefing. */
describe("agent facet: chat, conversations and briefing", () => {
  let ts: TestServer;
  let user: TestUser;
  let dataDir: string;
  let host: Host;

  beforeAll(async () => {
    ts = await startTestServer();
    user = await ts.addUser("ada");
    await user.client.call("createNote", {
      body: { title: "Project Atlas", content: "# Atlas\n\nThe Atlas launch is planned for March 3. Marketing owns the checklist." },
    });
    dataDir = await tempDir("tandem-desktop-agent-");
    host = await startTestHost(dataDir);
  });

  afterAll(async () => {
    await host?.close();
    await ts?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("asks to sign in first, then refuses malformed input by name", async () => {
    await expect(host.api.startChat({ message: "hi" })).rejects.toThrow("Sign in first");
    await expect(host.api.listConversations()).rejects.toThrow("Sign in first");
    await expect(host.api.latestBriefing()).rejects.toThrow("Sign in first");
    await signInAs(host, ts, user);
    const api = host.api as unknown as Record<string, (input: unknown) => Promise<unknown>>;
    await expect(api.startChat?.({ message: "   " })).rejects.toThrow("startChat: invalid input: message must not be empty");
    await expect(api.readChat?.({ chatId: "x", after: -1 })).rejects.toThrow("readChat: invalid input");
    await expect(api.getConversation?.({ conversationId: "1" })).rejects.toThrow("getConversation: invalid input");
    await expect(host.api.readChat({ chatId: "gone", after: 0 })).rejects.toThrow("no longer available");
  });

  it("streams a reply: the conversation first, the tool calls as they run, the answer, how it ended", async () => {
    const { chatId } = await host.api.startChat({ message: "When is the Atlas launch?", userTimezone: "Europe/Paris" });
    const { events, ending } = await readAll(host, chatId);
    expect(ending).toEqual({ status: "completed", error: null });
    expect(events[0]?.type).toBe("conversation-start");
    expect(events.at(-1)?.type).toBe("completion");
    const tools = events.flatMap((event) =>
      event.type === "tool-call-start" || event.type === "tool-call-end" ? [`${event.type}:${event.toolName}`] : [],
    );
    expect(tools).toEqual([
      "tool-call-start:search_notes",
      "tool-call-end:search_notes",
      "tool-call-start:get_note_content",
      "tool-call-end:get_note_content",
    ]);
    expect(answerOf(events)).toContain("March 3");

    // Listed (newest first) and loaded with both messages.
    const [listed] = await host.api.listConversations();
    const started = events[0]?.type === "conversation-start" ? events[0].conversationId : -1;
    expect(listed).toMatchObject({ conversationId: started, messageCount: 2 });
    const conversation = await host.api.getConversation({ conversationId: started });
    expect(conversation.messages.map((message) => [message.role, message.status])).toEqual([
      ["user", "complete"],
      ["assistant", "complete"],
    ]);
    expect(conversation.messages[1]?.toolsUsed).toEqual(["search_notes", "get_note_content"]);

    // Continued, then deleted.
    const next = await host.api.startChat({ message: "And who owns the checklist?", conversationId: started });
    expect(answerOf((await readAll(host, next.chatId)).events)).toContain("Marketing");
    expect((await host.api.getConversation({ conversationId: started })).messages).toHaveLength(4);
    await host.api.deleteConversation({ conversationId: started });
    await expect(host.api.getConversation({ conversationId: started })).rejects.toThrow(/not found/i);
  });

  it("rejects a message the server refuses, in the server's words", async () => {
    await expect(host.api.startChat({ message: "hello", conversationId: 999_999 })).rejects.toThrow(/conversation/i);
    await expect(host.api.startChat({ message: "x".repeat(32_001) })).rejects.toThrow(/at most 32000 characters/);
  });

  it("writes a briefing, then its strategies and matrix from the five summaries", async () => {
    expect(await host.api.latestBriefing()).toBeNull();
    const today = new Date().toISOString().slice(0, 10);
    await user.client.call("createTodo", { body: { title: "Send the Atlas press kit", dueDate: today, priority: 1 } });
    const briefing = await host.api.createBriefing({ userTimezone: "UTC" });
    expect(briefing.todoSummary).toContain("Send the Atlas press kit");
    expect(briefing.notesSummary).toContain("Project Atlas");
    expect(await host.api.latestBriefing()).toEqual(briefing);

    const summaries = {
      statusQuoSummary: briefing.statusQuoSummary,
      todoSummary: briefing.todoSummary,
      calendarSummary: briefing.calendarSummary,
      notesSummary: briefing.notesSummary,
      emailAttentionSummary: briefing.emailAttentionSummary,
    };
    const [strategies, matrix] = await Promise.all([host.api.briefingStrategies(summaries), host.api.briefingMatrix(summaries)]);
    expect(strategies.length).toBeGreaterThan(0);
    expect(matrix.q1_urgent_important.map((item) => item.title)).toContain("Send the Atlas press kit");
    await expect(host.api.createBriefing({ userTimezone: "Mars/Olympus" })).rejects.toThrow(/time zone/);
  });

  it("says the server cannot be reached, in words, when it is down", async () => {
    await ts.server.close();
    try {
      await expect(host.api.startChat({ message: "anyone there?" })).rejects.toThrow("Can't reach the server right now");
      await expect(host.api.listConversations()).rejects.toThrow("Can't reach the server right now");
      await expect(host.api.latestBriefing()).rejects.toThrow("Can't reach the server right now");
    } finally {
      await ts.restart();
    }
  });
});

/** A model that stalls mid-answer (the fake OpenAI-compatible provider): the reply is stopped, and kept as incomplete. */
describe("agent facet: stopping a reply", () => {
  let fake: FakeProvider;
  let ts: TestServer;
  let user: TestUser;
  let dataDir: string;
  let host: Host;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ defaultReply: { stall: true, textBefore: "Let me look at the whole plan first" } });
    ts = await startTestServer({ modelProvider: "openai-compatible", modelBaseUrl: fake.baseUrl, model: "fake-model" });
    user = await ts.addUser("stella");
    dataDir = await tempDir("tandem-desktop-agent-stop-");
    host = await startTestHost(dataDir);
    await signInAs(host, ts, user);
  });

  afterAll(async () => {
    await host?.close();
    await ts?.stop();
    await fake?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("stops a reply: what came so far stays, and the server keeps it marked incomplete", async () => {
    const { chatId } = await host.api.startChat({ message: "Plan my week" });
    const events: ChatEvent[] = [];
    await waitFor("the first words", async () => {
      const progress = await host.api.readChat({ chatId, after: events.length });
      events.push(...progress.events);
      return answerOf(events).includes("whole plan");
    });
    await host.api.stopChat({ chatId });
    const rest = await host.api.readChat({ chatId, after: events.length });
    expect(rest.ended).toEqual({ status: "stopped", error: null });
    // Stopping again, or a finished reply, is harmless.
    await host.api.stopChat({ chatId });

    const started = events[0]?.type === "conversation-start" ? events[0].conversationId : -1;
    const saved = await waitFor("the partial answer to be stored", async () => {
      const { messages } = await host.api.getConversation({ conversationId: started });
      return messages.length === 2 ? messages : null;
    });
    expect(saved[1]).toMatchObject({ role: "assistant", status: "incomplete" });
    expect(saved[1]?.content).toContain("Let me look at the whole plan");
  });
});
