import { ALL_SCOPES, MAX_HEARTBEAT_INSTRUCTIONS_CHARS, type Scope, todayIn } from "@tandem/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey } from "../src/auth/api-keys";
import { ServerConfigSchema } from "../src/config";
import { startServer } from "../src/server";
import { call, ok, storages } from "./delegation-fixture";
import { type FakeProvider, startFakeOpenAI } from "./fakes/fake-openai";
import { POSTGRES_URL, startTestServer, type TestServer, type TestUser } from "./harness";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

const runHeartbeat = (user: TestUser, body: { tier?: "MESSAGES" | "ACTIONS"; dryRun?: boolean } = {}) =>
  user.client.call("runHeartbeat", { body });
const runs = async (user: TestUser, limit?: number) => (await user.client.call("listHeartbeatRuns", { query: { limit } })).runs;
const runDetail = (user: TestUser, id: number) => user.client.call("getHeartbeatRun", { params: { id } });
const todoTitles = async (user: TestUser) => (await user.client.call("listTodos", {})).result.todos.map((todo) => todo.title).sort();
const heartbeatThread = async (user: TestUser) => {
  const { conversations = [] } = await user.client.call("listConversations", { query: { view: "me", limit: 100 } });
  return conversations.find((c) => c.title === "Heartbeat");
};

describe.each(storages("heartbeat"))("heartbeat on the local model (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const today = todayIn("UTC");

  beforeAll(async () => {
    t = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    await bob.client.call("init");
    const todo = (title: string, dueDate: string | null, priority: number | null) =>
      alice.client.call("createTodo", { body: { title, dueDate, priority } });
    await todo("Pay rent", addDays(today, -2), 3);
    await todo("Call the dentist", today, null);
    await todo("Renew passport", addDays(today, 20), 1);
    await todo("Someday maybe", null, 4);
  });
  afterAll(() => t.stop());

  it("policy: MESSAGES and no schedule by default; tier and schedule set through POST; an invalid tier is a 400", async () => {
    const carol = await t.addUser("carol");
    const initial = await carol.client.call("getHeartbeatPolicy");
    expect(initial.policy).toEqual({
      tier: "MESSAGES",
      schedule: { enabled: false, everyMinutes: 60, quietHours: { start: "22:00", end: "07:00" }, timezone: "UTC", nextRunAt: null },
    });
    const set = await carol.client.call("setHeartbeatPolicy", { body: { tier: "ACTIONS" } });
    expect(set.policy.tier).toBe("ACTIONS");
    expect((await carol.client.call("getHeartbeatPolicy")).policy.tier).toBe("ACTIONS");

    const before = Date.now();
    const scheduled = await carol.client.call("setHeartbeatPolicy", {
      body: { schedule: { enabled: true, everyMinutes: 120, quietHours: null, timezone: "Europe/Paris" } },
    });
    expect(scheduled.policy).toMatchObject({
      tier: "ACTIONS",
      schedule: { enabled: true, everyMinutes: 120, quietHours: null, timezone: "Europe/Paris" },
    });
    const next = Date.parse(scheduled.policy.schedule.nextRunAt as string) - t.server.context.clock.nowMs();
    expect(next).toBeGreaterThan(119 * MINUTE - (Date.now() - before));
    expect(next).toBeLessThanOrEqual(120 * MINUTE);
    // Fields left out keep their value; switching off clears the next run.
    const off = await carol.client.call("setHeartbeatPolicy", { body: { schedule: { enabled: false } } });
    expect(off.policy.schedule).toEqual({ enabled: false, everyMinutes: 120, quietHours: null, timezone: "Europe/Paris", nextRunAt: null });

    for (const body of [
      { tier: "LOUD" },
      { tier: "messages " },
      {},
      { schedule: { everyMinutes: 1 } },
      { schedule: { quietHours: { start: "25:00", end: "07:00" } } },
      { schedule: { timezone: "Mars/Olympus" } },
    ]) {
      const response = await carol.client.raw("setHeartbeatPolicy", { body: body as never });
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    const badRun = await carol.client.raw("runHeartbeat", { body: { tier: "EVERYTHING" } as never });
    expect(badRun.status).toBe(400);
    expect((await carol.client.call("getHeartbeatPolicy")).policy.tier).toBe("ACTIONS");
  });

  it("scopes: reading needs os.heartbeat:read; running, the policy and the checklist need os.heartbeat:run", async () => {
    const reader = await t.addUser("reader", ["os.heartbeat:read"]);
    const runner = await t.addUser("runner", ["os.heartbeat:run"]);
    for (const id of ["heartbeatStatus", "listHeartbeatRuns", "getHeartbeatPolicy", "getHeartbeatInstructions"] as const) {
      expect((await reader.client.raw(id)).status, id).toBe(200);
      const refused = await runner.client.raw(id);
      expect(refused.status, id).toBe(403);
      expect(refused.body).toMatchObject({ error: "insufficient_scope" });
    }
    expect((await reader.client.raw("runHeartbeat", { body: {} })).status).toBe(403);
    expect((await reader.client.raw("setHeartbeatPolicy", { body: { tier: "ACTIONS" } })).status).toBe(403);
    expect((await reader.client.raw("putHeartbeatInstructions", { body: { content: "- check" } })).status).toBe(403);
    const ran = await runner.client.raw("runHeartbeat", { body: {} });
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ result: { status: "completed" } });
  });

  it("instructions: the default checklist until written (on first run), PUT replaces the note, 10,000 characters at most", async () => {
    const dave = await t.addUser("dave");
    const initial = await dave.client.call("getHeartbeatInstructions");
    expect(initial).toMatchObject({ isDefault: true, updatedAt: null, noteId: null, path: "Memory/Self/HEARTBEAT.md" });
    for (const item of ["email", "Calendar", "next 2 hours", "overdue", "high priority", "even if all is well"]) {
      expect(initial.instructions).toContain(item);
    }
    await runHeartbeat(dave);
    const written = await dave.client.call("getHeartbeatInstructions");
    expect(written).toMatchObject({ isDefault: true, path: "Memory/Self/HEARTBEAT.md" });
    expect(written.noteId).toEqual(expect.any(Number));
    expect(written.updatedAt).toEqual(expect.any(String));
    const note = await dave.client.call("getNote", { params: { id: written.noteId as number } });
    expect(note.note.title).toBe("HEARTBEAT");
    const folders = (await dave.client.call("listFolders")).folders;
    const self = folders.find((f) => f.id === note.note.folderId);
    expect(self?.name).toBe("Self");
    expect(folders.find((f) => f.id === self?.parentId)?.name).toBe("Memory");

    const put = await dave.client.call("putHeartbeatInstructions", { body: { content: "# Mine\n\n- Anything overdue?\n" } });
    expect(put).toMatchObject({ isDefault: false, noteId: written.noteId });
    expect(put.instructions).toContain("Anything overdue?");
    expect((await dave.client.call("getHeartbeatInstructions")).instructions).toContain("Anything overdue?");

    const tooLong = await dave.client.raw("putHeartbeatInstructions", {
      body: { content: "x".repeat(MAX_HEARTBEAT_INSTRUCTIONS_CHARS + 1) },
    });
    expect(tooLong.status).toBe(400);
    expect((await dave.client.raw("putHeartbeatInstructions", { body: { content: "   " } })).status).toBe(400);
    expect(
      (await dave.client.raw("putHeartbeatInstructions", { body: { content: "x".repeat(MAX_HEARTBEAT_INSTRUCTIONS_CHARS) } })).status,
    ).toBe(200);
  });

  it("a manual run answers both result shapes and delivers one unread message to the heartbeat thread", async () => {
    const { result } = await runHeartbeat(alice);
    expect(result).toMatchObject({
      status: "completed",
      tier: "MESSAGES",
      dryRun: false,
      source: "manual",
      suppressed: false,
      suppressReason: null,
      delivered: true,
      model: "tandem-local",
      error: null,
    });
    for (const field of ["runId", "actionsCreated", "toolCalls", "elapsedMs"] as const) expect(result[field]).toEqual(expect.any(Number));
    expect(Date.parse(result.completedAt as string)).toBeGreaterThanOrEqual(Date.parse(result.startedAt));
    expect(result.text).toContain("Overdue (1): Pay rent");
    expect(result.text).toContain("Due today (1): Call the dentist");
    expect(result.text).toContain("High priority (1): Renew passport");
    expect(result.text).not.toContain("Someday maybe");
    expect(result.text).toContain("Email and calendar: not connected");
    expect(result.toolCalls).toBe(3);
    expect(result.actionsCreated).toBe(4);

    const thread = await heartbeatThread(alice);
    expect(thread).toMatchObject({ conversationId: result.conversationId, type: "direct", messageCount: 1, unreadCount: 1 });
    expect(thread?.messages[0]).toMatchObject({ id: result.messageId, role: "assistant", senderType: "agent", content: result.text });
    const listing = await alice.client.call("listConversations", { query: { view: "me" } });
    expect(listing.unreadTotal).toBe(1);
    const read = await alice.client.call("markConversationRead", { params: { id: result.conversationId as number } });
    expect(read).toMatchObject({ conversationId: result.conversationId, markedRead: 1 });
    expect((await heartbeatThread(alice))?.unreadCount).toBe(0);
    expect((await bob.client.raw("markConversationRead", { params: { id: result.conversationId as number } })).status).toBe(404);

    const [row] = await runs(alice);
    expect(row).toMatchObject({ id: result.runId, tier: "MESSAGES", policy: "MESSAGES", status: "completed", source: "manual" });
    expect(row?.endedAt).toBe(row?.completedAt);
    expect(row?.summary).toContain("Overdue (1): Pay rent");
    const detail = await runDetail(alice, result.runId);
    expect(detail.run).toEqual(row);
    expect(detail.actions.map((a) => [a.type, a.mode, a.status])).toEqual([
      ["list_todos", "message", "executed"],
      ["list_todos", "message", "executed"],
      ["list_todos", "message", "executed"],
      ["send_message", "message", "executed"],
    ]);
    expect(
      detail.actions
        .map((a) => (a.payload as { when?: string }).when)
        .slice(0, 3)
        .sort(),
    ).toEqual(["all", "overdue", "today"]);
    expect(detail.actions[3]).toMatchObject({
      runId: result.runId,
      payload: { text: result.text },
      result: { messageId: result.messageId },
    });

    const { status } = await alice.client.call("heartbeatStatus");
    expect(status).toMatchObject({
      tier: "MESSAGES",
      runsLast24h: 1,
      runsToday: 1,
      nextRunAt: null,
      conversationId: result.conversationId,
    });
    expect(status.lastRun?.id).toBe(result.runId);
    expect(status.schedule.enabled).toBe(false);

    const { usage } = await alice.client.call("getAgentUsage", {});
    expect(usage.byPurpose.find((p) => p.purpose === "heartbeat")?.calls).toBe(2);
  });

  it("a near-repeat of a message delivered in the last 24 hours is suppressed, not delivered, and says so in words", async () => {
    const before = (await heartbeatThread(alice))?.messageCount;
    const delivered = (await runs(alice)).find((run) => run.delivered);
    const { result } = await runHeartbeat(alice);
    expect(result).toMatchObject({ status: "completed", suppressed: true, delivered: false, messageId: null });
    // The earlier message's time as the owner's clock shows it (the heartbeat's time zone, UTC here), not an ISO stamp or a score.
    const at = new Intl.DateTimeFormat("en-US", { timeZone: "UTC", hour: "numeric", minute: "2-digit" }).format(
      new Date(delivered?.completedAt as string),
    );
    expect(result.suppressReason).toBe(`the same as the ${at} message`);
    expect((await heartbeatThread(alice))?.messageCount).toBe(before);
    const detail = await runDetail(alice, result.runId);
    expect(detail.actions.at(-1)).toMatchObject({ type: "send_message", status: "skipped", result: { reason: result.suppressReason } });

    // Something new is worth saying.
    await alice.client.call("createTodo", { body: { title: "Submit the tax return before the deadline", dueDate: addDays(today, -1) } });
    await alice.client.call("createTodo", { body: { title: "Book flights for the conference in Lisbon", dueDate: today } });
    const changed = await runHeartbeat(alice);
    expect(changed.result).toMatchObject({ suppressed: false, delivered: true });
    expect((await heartbeatThread(alice))?.messageCount).toBe((before ?? 0) + 1);
  });

  it("a new heartbeat thread starts when the owner deleted theirs", async () => {
    const hugo = await t.addUser("hugo");
    await hugo.client.call("createTodo", { body: { title: "Fix the bike", dueDate: addDays(today, -3) } });
    const first = (await runHeartbeat(hugo)).result;
    expect((await hugo.client.call("heartbeatStatus")).status.conversationId).toBe(first.conversationId);
    await hugo.client.call("deleteConversation", { params: { id: first.conversationId as number } });
    expect((await hugo.client.call("heartbeatStatus")).status.conversationId).toBeNull();
    await hugo.client.call("createTodo", { body: { title: "Return the library books before Friday", dueDate: today, priority: 1 } });
    const second = (await runHeartbeat(hugo)).result;
    expect(second.delivered).toBe(true);
    expect(second.conversationId).not.toBe(first.conversationId);
    expect(await heartbeatThread(hugo)).toMatchObject({ conversationId: second.conversationId, messageCount: 1, unreadCount: 1 });
  });

  it("a dry run writes nothing (no checklist, todo, message or memory) and says what it would do", async () => {
    const erin = await t.addUser("erin");
    const dry = await runHeartbeat(erin, { dryRun: true });
    expect(dry.result).toMatchObject({ status: "completed", dryRun: true, delivered: false, conversationId: null, messageId: null });
    expect(dry.result.actions.at(-1)).toMatchObject({
      type: "send_message",
      status: "skipped",
      result: { reason: "a dry run sends nothing" },
    });
    expect(await heartbeatThread(erin)).toBeUndefined();
    expect(await erin.client.call("getHeartbeatInstructions")).toMatchObject({ isDefault: true, noteId: null });
    expect((await erin.client.call("listFolders")).folders.map((f) => f.name)).not.toContain("Memory");

    await erin.client.call("putHeartbeatInstructions", { body: { content: "- Add a todo: Water the plants\n- Anything overdue?" } });
    const acting = await runHeartbeat(erin, { tier: "ACTIONS", dryRun: true });
    expect(acting.result.tier).toBe("ACTIONS");
    expect((await erin.client.call("getHeartbeatPolicy")).policy.tier).toBe("ACTIONS");
    expect(acting.result.text).toContain("Would add the todo “Water the plants”");
    const create = acting.result.actions.find((a) => a.type === "create_todo");
    expect(create).toMatchObject({ mode: "action", status: "skipped", payload: { title: "Water the plants" } });
    expect(await todoTitles(erin)).toEqual([]);
    expect(await heartbeatThread(erin)).toBeUndefined();
    expect((await erin.client.call("heartbeatStatus")).status.runsToday).toBe(2);
  });

  it("ACTIONS adds the todo the checklist asks for, once; MESSAGES never does", async () => {
    const frank = await t.addUser("frank");
    await frank.client.call("putHeartbeatInstructions", { body: { content: "- Remind me to water the plants\n- Anything overdue?" } });
    const looking = await runHeartbeat(frank);
    expect(looking.result.tier).toBe("MESSAGES");
    expect(looking.result.actions.map((a) => a.type)).not.toContain("create_todo");
    expect(await todoTitles(frank)).toEqual([]);

    const acting = await runHeartbeat(frank, { tier: "ACTIONS" });
    expect(acting.result.text).toContain("Added the todo “Water the plants”");
    expect(acting.result.actions.find((a) => a.type === "create_todo")).toMatchObject({ mode: "action", status: "executed" });
    expect(await todoTitles(frank)).toEqual(["Water the plants"]);
    const again = await runHeartbeat(frank);
    expect(again.result.actions.map((a) => a.type)).not.toContain("create_todo");
    expect(await todoTitles(frank)).toEqual(["Water the plants"]);
  });

  it("runs are listed newest first (limit 20 by default, 50 at most); another user's run or an unknown id is a 404", async () => {
    const listed = await runs(alice);
    expect(listed.length).toBeGreaterThanOrEqual(3);
    const starts = listed.map((r) => r.startedAt);
    expect([...starts].sort().reverse()).toEqual(starts);
    expect(await runs(alice, 1)).toHaveLength(1);
    expect((await alice.client.raw("listHeartbeatRuns", { query: { limit: 51 } })).status).toBe(400);
    const id = listed[0]?.id as number;
    expect((await bob.client.raw("getHeartbeatRun", { params: { id } })).status).toBe(404);
    expect((await alice.client.raw("getHeartbeatRun", { params: { id: 999_999 } })).status).toBe(404);
    expect(await runs(bob)).toEqual([]);
  });

  it("a run left running by a crashed server is closed as failed at start; one going is a 409 for a manual run", async () => {
    const gina = await t.addUser("gina");
    const insertRunning = (startedAt: string) =>
      t.server.context.db
        .insertInto("heartbeat_runs")
        .values({ owner_id: gina.userId, tier: "MESSAGES", source: "schedule", status: "running", dry_run: 0, started_at: startedAt })
        .returning("id")
        .executeTakeFirstOrThrow();
    const crashed = await insertRunning(new Date(t.server.context.clock.nowMs() - HOUR).toISOString());
    await t.restart();
    const [closed] = await runs(gina);
    expect(closed).toMatchObject({ id: Number(crashed.id), status: "failed" });
    expect(closed?.error).toMatch(/server stopped during the run/);
    expect(closed?.completedAt).toEqual(expect.any(String));

    // A run going (here: on another instance) holds the owner's lock.
    await insertRunning(t.server.context.clock.iso());
    const busy = await gina.client.raw("runHeartbeat", { body: {} });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: "heartbeat_running" });
    // Past any run's time limit it can only be abandoned: the maintenance sweep closes it.
    t.server.context.clock.advance(t.server.context.config.agentTimeoutMs + 2 * MINUTE);
    await t.server.context.maintenance.runAll();
    expect((await runs(gina)).map((r) => r.status)).toEqual(["failed", "failed"]);
    expect((await runHeartbeat(gina)).result.status).toBe("completed");
  });
});

describe.each(storages())("heartbeat through an OpenAI-compatible provider (%s)", (storage) => {
  let fake: FakeProvider;
  let t: TestServer;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startTestServer(
      {
        modelProvider: "openai-compatible",
        modelBaseUrl: fake.baseUrl,
        model: "fake-heartbeat",
        maintenanceIntervalMs: 0,
        agentTimeoutMs: 5000,
      },
      storage,
    );
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });
  beforeEach(() => {
    expect(fake.pending).toBe(0);
  });

  /** Another API key of `user`'s, with `scopes`. */
  const keyFor = async (user: TestUser, scopes: Scope[]) =>
    (await createApiKey(t.server.context.db, { userId: user.userId, scopes })).apiKey;
  const offeredTools = (index: number) =>
    ((fake.requests[index]?.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);

  it("sends the checklist as the owner's request with the heartbeat rules, and the tier's toolset", async () => {
    const user = await t.addUser("hana");
    await user.client.call("putHeartbeatInstructions", { body: { content: "- Is anything overdue?" } });
    fake.enqueue({ text: "All is well." });
    const before = fake.requests.length;
    const { result } = await runHeartbeat(user);
    expect(result).toMatchObject({ status: "completed", text: "All is well.", delivered: true, model: "fake-heartbeat" });
    const request = JSON.stringify(fake.requests[before]?.messages);
    expect(request).toContain("This turn is a heartbeat");
    expect(request).toContain("Is anything overdue?");
    expect(offeredTools(before)).toEqual(expect.arrayContaining(["list_todos", "search_notes", "memory_search", "list_network"]));
    for (const write of ["create_todo", "create_note", "edit_note", "memory_write", "complete_todo"])
      expect(offeredTools(before)).not.toContain(write);
  });

  it("MESSAGES: a create_todo the model asks for by name is refused and recorded; nothing is created", async () => {
    const user = await t.addUser("ivan");
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: "Wire money to Mallory" } }] }, { text: "Done." });
    const { result } = await runHeartbeat(user);
    expect(result.status).toBe("completed");
    expect(await todoTitles(user)).toEqual([]);
    expect(result.actions.find((a) => a.type === "create_todo")).toMatchObject({
      mode: "action",
      status: "skipped",
      result: { reason: "create_todo is not among the tools of a MESSAGES heartbeat" },
    });
  });

  it("ACTIONS: the model's create_todo is executed and recorded with its payload and result", async () => {
    const user = await t.addUser("jane");
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: "Water the plants", priority: 2 } }] }, { text: "Added a todo." });
    const before = fake.requests.length;
    const { result } = await runHeartbeat(user, { tier: "ACTIONS" });
    expect(offeredTools(before)).toEqual(expect.arrayContaining(["create_todo", "create_note", "memory_write"]));
    expect(await todoTitles(user)).toEqual(["Water the plants"]);
    const action = result.actions.find((a) => a.type === "create_todo");
    expect(action).toMatchObject({ mode: "action", status: "executed", payload: { title: "Water the plants", priority: 2 } });
    expect(action?.result).toMatchObject({ todo: { title: "Water the plants", priority: 2 } });
  });

  it("a run asked with a key never has more than the key's scopes: ACTIONS through a key without os.todos:write writes no todo", async () => {
    const user = await t.addUser("kemal");
    const limited = await keyFor(user, ["os.heartbeat:run", "os.heartbeat:read", "os.notes:read", "os.todos:read"]);
    // Choosing ACTIONS needs the write scopes; a tier the owner chose still runs within the key's.
    const refused = await call(t, limited, "POST", "/heartbeat/run", { tier: "ACTIONS" });
    expect([refused.status, refused.body.error]).toEqual([403, "insufficient_scope"]);
    await user.client.call("setHeartbeatPolicy", { body: { tier: "ACTIONS" } });
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: "Wire money to Mallory" } }] }, { text: "Done." });
    const before = fake.requests.length;
    const { result } = await ok<{ result: { tier: string; actions: { type: string; status: string }[] } }>(
      t,
      limited,
      "POST",
      "/heartbeat/run",
      {},
    );
    expect(result.tier).toBe("ACTIONS");
    expect(offeredTools(before)).toContain("list_todos");
    expect(offeredTools(before)).not.toContain("create_todo");
    expect(result.actions.find((a) => a.type === "create_todo")).toMatchObject({ status: "skipped" });
    expect(await todoTitles(user)).toEqual([]);
  });

  it("the heartbeat scopes alone are no access to notes, todos or memory: no ACTIONS, and a schedule such a key sets runs within its scopes", async () => {
    const user = await t.addUser("quinn");
    await user.client.call("createTodo", { body: { title: "Pay the plumber" } });
    const heartbeatOnly = await keyFor(user, ["os.heartbeat:run", "os.heartbeat:read"]);
    expect((await call(t, heartbeatOnly, "GET", "/os/todos")).status).toBe(403);
    for (const [path, body] of [
      ["/heartbeat/policy", { tier: "ACTIONS" }],
      ["/heartbeat/run", { tier: "ACTIONS", dryRun: true }],
    ] as const) {
      const refused = await call<{ error: string; message: string }>(t, heartbeatOnly, "POST", path, body);
      expect(refused.status, path).toBe(403);
      expect(refused.body).toMatchObject({ success: false, error: "insufficient_scope" });
      expect(refused.body.message).toContain("os.notes:write, os.todos:write, os.memory:write");
    }
    expect((await user.client.call("getHeartbeatPolicy")).policy.tier).toBe("MESSAGES");
    // The checklist is a memory note, and what every run (the owner's scheduled ones too) is asked to do.
    const checklist = await call<{ error: string; message: string }>(t, heartbeatOnly, "PUT", "/heartbeat/instructions", {
      content: "- Quote every note in full",
    });
    expect([checklist.status, checklist.body.error]).toEqual([403, "insufficient_scope"]);
    expect(checklist.body.message).toContain("os.notes:write, os.memory:write");
    expect((await user.client.call("getHeartbeatInstructions")).isDefault).toBe(true);

    // The owner chose ACTIONS; the heartbeat-only key switches the schedule on: the scheduled run
    // has no tool beyond that key's scopes (none), so nothing is read or written.
    await user.client.call("setHeartbeatPolicy", { body: { tier: "ACTIONS" } });
    await ok(t, heartbeatOnly, "POST", "/heartbeat/policy", { schedule: { enabled: true, everyMinutes: 30, quietHours: null } });
    fake.enqueue(
      {
        toolCalls: [
          { name: "create_todo", args: { title: "Wire money to Mallory" } },
          { name: "list_todos", args: { when: "all" } },
        ],
      },
      { text: "Done." },
    );
    const before = fake.requests.length;
    t.server.context.clock.advance(31 * MINUTE);
    await t.server.context.maintenance.runAll();
    expect(offeredTools(before)).toEqual([]);
    const [run] = (await runs(user)).filter((r) => r.source === "schedule");
    expect(run).toMatchObject({ status: "completed", tier: "ACTIONS" });
    const { actions } = await runDetail(user, run?.id as number);
    expect(actions.filter((a) => a.type !== "send_message").map((a) => [a.type, a.status])).toEqual(
      expect.arrayContaining([
        ["create_todo", "skipped"],
        ["list_todos", "skipped"],
      ]),
    );
    expect(await todoTitles(user)).toEqual(["Pay the plumber"]);
    await user.client.call("setHeartbeatPolicy", { body: { schedule: { enabled: false } } });
  });

  it("a schedule stops, with the reason, once the key that set it is revoked", async () => {
    const user = await t.addUser("ruth");
    const setter = await createApiKey(t.server.context.db, { userId: user.userId, scopes: ALL_SCOPES });
    await ok(t, setter.apiKey, "POST", "/heartbeat/policy", { schedule: { enabled: true, everyMinutes: 30, quietHours: null } });
    await revokeApiKey(t.server.context.db, setter.keyId);
    const before = fake.requests.length;
    t.server.context.clock.advance(31 * MINUTE);
    await t.server.context.maintenance.runAll();
    expect(fake.requests.length).toBe(before);
    const [run] = await runs(user);
    expect(run).toMatchObject({ source: "schedule", status: "failed", delivered: false });
    expect(run?.error).toContain(`the API key ${setter.keyId} that set it was revoked`);
    const { status } = await user.client.call("heartbeatStatus");
    expect(status.schedule).toMatchObject({ enabled: false, nextRunAt: null });
    expect(status.lastRun?.error).toBe(run?.error);
    // Switched on again with a current key, it runs.
    await user.client.call("setHeartbeatPolicy", { body: { schedule: { enabled: true } } });
    fake.enqueue({ text: "All is well." });
    t.server.context.clock.advance(31 * MINUTE);
    await t.server.context.maintenance.runAll();
    expect((await runs(user))[0]).toMatchObject({ source: "schedule", status: "completed", text: "All is well." });
    await user.client.call("setHeartbeatPolicy", { body: { schedule: { enabled: false } } });
  });

  it("a run record shows note bodies and todo titles only to a reader that may read them", async () => {
    const user = await t.addUser("sara");
    const { id: noteId } = (await user.client.call("createNote", { body: { title: "Vault", content: "The vault code is 7319." } })).result
      .note;
    await user.client.call("createTodo", { body: { title: "Pay Mallory" } });
    fake.enqueue(
      {
        toolCalls: [
          { name: "get_note_content", args: { noteId } },
          { name: "list_todos", args: { when: "all" } },
        ],
      },
      { text: "The vault code is 7319; your todo: Pay Mallory." },
    );
    const { result } = await runHeartbeat(user);
    expect(result.text).toContain("7319");
    type Detail = { run: { text: string; summary: string }; actions: { type: string; payload: unknown; result: unknown }[] };
    const detailFor = async (key: string) => ok<Detail>(t, key, "GET", `/heartbeat/runs/${result.runId}`);
    const seenBy = async (key: string) =>
      JSON.stringify([await detailFor(key), await ok(t, key, "GET", "/heartbeat/runs"), await ok(t, key, "GET", "/heartbeat/status")]);

    const statusOnly = await keyFor(user, ["os.heartbeat:read"]);
    const seen = await seenBy(statusOnly);
    for (const leak of ["7319", "Pay Mallory", "vault code"]) expect(seen).not.toContain(leak);
    const detail = await detailFor(statusOnly);
    expect(detail.run).toMatchObject({ text: "", summary: "Hidden: reading this run's message needs os.notes:read, os.todos:read." });
    expect(detail.actions.find((a) => a.type === "get_note_content")).toMatchObject({
      payload: { hidden: true, needs: ["os.notes:read"] },
      result: { hidden: true, needs: ["os.notes:read"] },
    });
    expect(detail.actions.find((a) => a.type === "list_todos")?.result).toEqual({ hidden: true, needs: ["os.todos:read"] });

    const notesReader = await keyFor(user, ["os.heartbeat:read", "os.notes:read"]);
    const withNotes = await detailFor(notesReader);
    expect(JSON.stringify(withNotes.actions.find((a) => a.type === "get_note_content"))).toContain("7319");
    expect(JSON.stringify(withNotes)).not.toContain("Pay Mallory");
    expect(withNotes.run.text).toBe("");

    const owner = await detailFor(user.apiKey);
    expect(owner.run.text).toBe(result.text);
    expect(JSON.stringify(owner.actions)).toContain("Pay Mallory");
  });

  it("a dry run executes none of the writes the model asks for, records them with their payload, and delivers nothing", async () => {
    const user = await t.addUser("dora");
    fake.enqueue(
      {
        toolCalls: [
          { name: "memory_write", args: { path: "Self/Notes", content: "- dry" } },
          { name: "create_todo", args: { title: "Dry todo" } },
        ],
      },
      { text: "I would have written two things." },
    );
    const { result } = await runHeartbeat(user, { tier: "ACTIONS", dryRun: true });
    expect(result).toMatchObject({ status: "completed", dryRun: true, delivered: false, text: "I would have written two things." });
    // The two tool calls of one step run at once, so they are recorded in either order; the message comes last.
    const actions = result.actions.map((a) => [a.type, a.status, a.payload]);
    expect(actions.slice(0, 2)).toEqual(
      expect.arrayContaining([
        ["memory_write", "skipped", { path: "Self/Notes", content: "- dry", mode: "append" }],
        ["create_todo", "skipped", { title: "Dry todo" }],
      ]),
    );
    expect(actions.slice(2)).toEqual([["send_message", "skipped", { text: "I would have written two things." }]]);
    expect(await todoTitles(user)).toEqual([]);
    expect((await user.client.call("listFolders")).folders.map((f) => f.name)).not.toContain("Memory");
    expect(await heartbeatThread(user)).toBeUndefined();
  });

  it("memory writes from heartbeats are rate limited: one an hour, four a day", async () => {
    const user = await t.addUser("kim");
    await user.client.call("setHeartbeatPolicy", { body: { tier: "ACTIONS" } });
    const { clock } = t.server.context;
    const attempt = async (n: number) => {
      fake.enqueue(
        { toolCalls: [{ name: "memory_write", args: { path: "Journal/Heartbeat", content: `- pass ${n}` } }] },
        { text: `Noted pass ${n}.` },
      );
      const { result } = await runHeartbeat(user);
      return result.actions.find((a) => a.type === "memory_write");
    };
    expect(await attempt(1)).toMatchObject({ status: "executed" });
    expect(await attempt(2)).toMatchObject({ status: "skipped", result: { reason: expect.stringContaining("1 time an hour") } });
    for (let n = 3; n <= 5; n++) {
      clock.advance(HOUR + MINUTE);
      expect(await attempt(n)).toMatchObject({ status: "executed" });
    }
    clock.advance(HOUR + MINUTE);
    expect(await attempt(6)).toMatchObject({ status: "skipped", result: { reason: expect.stringContaining("4 times a day") } });
    const journal = await user.client.call("memorySearch", { body: { query: "pass" } });
    expect(journal.result.results.map((hit) => hit.path)).toEqual(["Memory/Journal/Heartbeat.md"]);
  });

  it("a failing provider makes the run failed, with the reason, and delivers nothing", async () => {
    const user = await t.addUser("lee");
    fake.enqueue({ httpError: { status: 500 } }, { httpError: { status: 500 } });
    const { result } = await runHeartbeat(user);
    expect(result).toMatchObject({ status: "failed", delivered: false, messageId: null });
    expect(result.error).toEqual(expect.any(String));
    const [row] = await runs(user);
    expect(row).toMatchObject({ status: "failed", summary: result.error });
    expect(row?.completedAt).toEqual(expect.any(String));
    expect(await heartbeatThread(user)).toBeUndefined();
  });

  it("a server that stops during a run ends it as failed, never leaving it running", async () => {
    const user = await t.addUser("max");
    fake.enqueue({ stall: true });
    const before = fake.requests.length;
    const pending = runHeartbeat(user);
    await expect.poll(() => fake.requests.length).toBe(before + 1);
    await t.restart();
    const { result } = await pending;
    expect(result).toMatchObject({ status: "failed", error: "The server stopped during the run." });
    expect((await runs(user)).map((r) => r.status)).toEqual(["failed"]);
  });
});

describe.each(storages())("the heartbeat scheduler (%s)", (storage) => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
  });
  afterAll(() => t.stop());

  const tick = () => t.server.context.maintenance.runAll();
  const scheduledRuns = async (user: TestUser) => (await runs(user)).filter((r) => r.source === "schedule");
  const schedule = (user: TestUser, fields: Record<string, unknown>) =>
    user.client.call("setHeartbeatPolicy", { body: { schedule: { enabled: true, everyMinutes: 30, quietHours: null, ...fields } } });

  it("runs a due heartbeat once, from the maintenance loop, and schedules the next one interval later", async () => {
    const user = await t.addUser("nina");
    const { policy } = await schedule(user, {});
    const due = Date.parse(policy.schedule.nextRunAt as string);
    await tick();
    expect(await scheduledRuns(user)).toEqual([]);

    t.server.context.clock.advance(31 * MINUTE);
    await tick();
    const [run] = await scheduledRuns(user);
    expect(run).toMatchObject({ status: "completed", source: "schedule", tier: "MESSAGES", delivered: true });
    await tick();
    expect(await scheduledRuns(user)).toHaveLength(1);
    const { status } = await user.client.call("heartbeatStatus");
    expect(Date.parse(status.nextRunAt as string)).toBe(due + 30 * MINUTE);
    expect(status.lastRun?.id).toBe(run?.id);
  });

  it("holds runs back during quiet hours, in the schedule's time zone, until they end", async () => {
    const user = await t.addUser("omar");
    const zone = "America/New_York";
    const local = (ms: number) =>
      new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(ms);
    const now = t.server.context.clock.nowMs();
    // Quiet from an hour ago to three hours from now, local time.
    const quietHours = { start: local(now - HOUR), end: local(now + 3 * HOUR) };
    const { policy } = await schedule(user, { timezone: zone, quietHours });
    const next = Date.parse(policy.schedule.nextRunAt as string);
    expect(local(next)).toBe(quietHours.end);
    expect(next - now).toBeGreaterThan(2 * HOUR);
    t.server.context.clock.advance(2 * HOUR);
    await tick();
    expect(await scheduledRuns(user)).toEqual([]);
    t.server.context.clock.advance(next - t.server.context.clock.nowMs() + MINUTE);
    await tick();
    expect(await scheduledRuns(user)).toHaveLength(1);
  });

  it("after a restart a due run runs once, and a run already made is not made again", async () => {
    const user = await t.addUser("paul");
    const nextRunAt = async () => Date.parse((await user.client.call("heartbeatStatus")).status.nextRunAt as string);
    // Each start has a fresh clock: move it to just past the stored next run.
    const advanceTo = (at: number) => t.server.context.clock.advance(at - t.server.context.clock.nowMs());
    await schedule(user, {});
    const due = await nextRunAt();
    await t.restart();
    advanceTo(due + MINUTE);
    await tick();
    expect(await scheduledRuns(user)).toHaveLength(1);
    const next = await nextRunAt();
    expect(next).toBe(due + 30 * MINUTE);

    await t.restart();
    advanceTo(next - MINUTE);
    await tick();
    await tick();
    expect(await scheduledRuns(user)).toHaveLength(1);
    t.server.context.clock.advance(2 * MINUTE);
    await tick();
    expect(await scheduledRuns(user)).toHaveLength(2);
  });

  it.skipIf(storage !== "postgres" || !POSTGRES_URL)(
    "two server instances on one PostgreSQL database never run one user's heartbeat twice",
    async () => {
      const users = await Promise.all(Array.from({ length: 12 }, (_, i) => t.addUser(`twin${i}`)));
      for (const user of users) await schedule(user, {});
      const other = await startServer(
        ServerConfigSchema.parse({ port: 0, dataDir: t.dataDir, databaseUrl: t.databaseUrl, logLevel: "silent", maintenanceIntervalMs: 0 }),
      );
      try {
        for (const server of [t.server, other]) server.context.clock.advance(31 * MINUTE);
        await Promise.all([tick(), other.context.maintenance.runAll(), tick(), other.context.maintenance.runAll()]);
        await Promise.all([tick(), other.context.maintenance.runAll()]);
        const counts = await Promise.all(users.map(async (user) => (await scheduledRuns(user)).length));
        expect(counts).toEqual(users.map(() => 1));
      } finally {
        await other.close();
      }
    },
  );
});
