import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepEscalations } from "../src/agent/escalations/escalations";
import type { RunningServer } from "../src/server";
import { agentPair, heartbeat as bridgeHeartbeat, call, grantAgentAccess, openGrant, storages, userEvents } from "./delegation-fixture";
import { type FakeProvider, startFakeOpenAI } from "./fakes/fake-openai";
import { WebhookReceiver } from "./fakes/webhook-receiver";
import {
  POSTGRES_URL,
  REDIS_URL,
  randomRedisPrefix,
  startAnotherInstance,
  startTestServer,
  type TestServer,
  type TestUser,
} from "./harness";

/**
 * Escalations over the wire: a heartbeat ACTIONS run (and an agent RPC) whose owner says `ask` for
 * create_todo pauses; continue runs exactly the recorded call once and the run completes; stop
 * tells the model "stopped by the owner"; expiry counts as stop; two resolves at once give one
 * 200 and one 409; another owner's is a 404; a decision claimed before a restart is resumed after.
 * Runs on both databases: the claims are conditional updates that race on PostgreSQL.
 */

interface WireEscalation {
  id: string;
  kind: string;
  source: { type: string; id: string };
  runId: string | null;
  toolName: string;
  summary: string;
  consequence: string;
  argumentsHash: string;
  status: string;
  decidedBy: string | null;
  expiresAt: string;
}

describe.each(storages("escalations"))("escalations (%s)", (storage) => {
  let t: TestServer;
  let fake: FakeProvider;
  let receiver: WebhookReceiver;
  let n = 0;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    receiver = await WebhookReceiver.start();
    t = await startTestServer(
      {
        maintenanceIntervalMs: 0,
        modelProvider: "openai-compatible",
        modelBaseUrl: fake.baseUrl,
        model: "fake-escalations",
        allowPrivateWebhooks: true,
        webhookPollMs: 20,
      },
      storage,
    );
  });
  afterAll(async () => {
    await t?.stop();
    await fake?.close();
    await receiver?.close();
  });

  /** A fresh owner whose heartbeat runs ACTIONS and asks before create_todo. */
  async function owner(): Promise<TestUser> {
    const user = await t.addUser(`owner${++n}`);
    await user.client.call("init");
    await user.client.call("setHeartbeatPolicy", { body: { tier: "ACTIONS", toolPolicy: { create_todo: "ask", edit_note: "deny" } } });
    return user;
  }

  const api = (user: TestUser, method: string, path: string, body?: unknown) =>
    call<Record<string, unknown>>(t, user.apiKey, method, path, body);
  const list = async (user: TestUser, status?: string) =>
    ((await api(user, "GET", `/escalations${status ? `?status=${status}` : ""}`)).body.escalations ?? []) as WireEscalation[];
  const resolve = (user: TestUser, id: string, decision: "continue" | "stop", prefix = "") =>
    api(user, "POST", `${prefix}/escalations/${id}/resolve`, { decision });
  const todoTitles = async (user: TestUser) => (await user.client.call("listTodos", {})).result.todos.map((todo) => todo.title);
  const runStatus = async (user: TestUser, runId: number) =>
    (await user.client.call("getHeartbeatRun", { params: { id: runId } })).run.status;

  /** Runs alice's heartbeat into a create_todo call; answers the run and its one pending escalation. */
  async function pausedHeartbeat(user: TestUser, title: string) {
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title } }] });
    const { result: run } = await user.client.call("runHeartbeat", { body: {} });
    expect(run.status).toBe("requires_action");
    const [escalation] = await list(user, "pending");
    expect(escalation).toMatchObject({ kind: "tool_call", source: { type: "heartbeat", id: String(run.runId) }, toolName: "create_todo" });
    return { runId: run.runId, escalation: escalation as WireEscalation };
  }

  it("ask pauses the run (pending, on the stream); continue runs the recorded call once and the run completes", async () => {
    const alice = await owner();
    expect((await alice.client.call("getHeartbeatPolicy")).policy.toolPolicy).toEqual({ create_todo: "ask", edit_note: "deny" });
    const before = fake.requests.length;
    const { runId, escalation } = await pausedHeartbeat(alice, "Buy milk");
    // ask keeps the tool (the model may call it); deny removes it.
    const offered = ((fake.requests[before]?.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(offered).toContain("create_todo");
    expect(offered).not.toContain("edit_note");
    expect(escalation.summary).toContain("Buy milk");
    expect(escalation.argumentsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await todoTitles(alice)).not.toContain("Buy milk");
    const requested = (await userEvents(t, alice)).filter((e) => e.type === "escalation.requested");
    expect(requested.map((e) => (e.data as { escalation: WireEscalation }).escalation.id)).toEqual([escalation.id]);
    // The same under /net/escalations.
    expect((await api(alice, "GET", `/net/escalations/${escalation.id}`)).body).toMatchObject({
      escalation: { id: escalation.id, status: "pending" },
    });

    fake.enqueue({ text: "I added Buy milk." });
    const answer = await resolve(alice, escalation.id, "continue");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ escalation: { status: "continued", decidedBy: String(alice.userId) } });
    await expect.poll(() => runStatus(alice, runId)).toBe("completed");
    expect((await todoTitles(alice)).filter((title) => title === "Buy milk")).toHaveLength(1);
    const resolvedEvents = (await userEvents(t, alice)).filter((e) => e.type === "escalation.resolved");
    expect(resolvedEvents).toHaveLength(1);

    const again = await resolve(alice, escalation.id, "continue");
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: "already_resolved" });
  });

  it("the owner's webhooks get escalation.requested and escalation.resolved through the outbox, signed", async () => {
    const alice = await owner();
    const { path, url } = receiver.newPath();
    const created = await api(alice, "POST", "/webhooks", { url, events: ["escalation.requested", "escalation.resolved"] });
    expect(created.status).toBe(201);
    receiver.trust(path, created.body.secret as string);
    const { escalation } = await pausedHeartbeat(alice, "Hooked");
    fake.enqueue({ text: "Stopped as asked." });
    await resolve(alice, escalation.id, "stop");
    const [requested, resolved] = await receiver.nth(2, (w) => w.path === path);
    expect(requested?.payload).toMatchObject({ type: "escalation.requested", data: { escalationId: escalation.id, tool: "create_todo" } });
    expect(resolved?.payload).toMatchObject({ type: "escalation.resolved", data: { escalationId: escalation.id, decision: "stop" } });
    expect(receiver.rejected).toEqual([]);
  });

  it("stop: the model reads 'stopped by the owner' and the run goes on without the call", async () => {
    const alice = await owner();
    const { runId, escalation } = await pausedHeartbeat(alice, "Wire money");
    fake.enqueue({ text: "The owner stopped that." });
    const before = fake.requests.length;
    expect((await resolve(alice, escalation.id, "stop", "/net")).status).toBe(200);
    await expect.poll(() => runStatus(alice, runId)).toBe("completed");
    expect(JSON.stringify(fake.requests[before]?.messages)).toContain("stopped by the owner");
    expect(await todoTitles(alice)).not.toContain("Wire money");
  });

  it("expiry counts as stop: resolving after it is a 409 expired, and the run resumes told it was stopped", async () => {
    const alice = await owner();
    const { runId, escalation } = await pausedHeartbeat(alice, "Late todo");
    await t.server.context.db
      .updateTable("escalations")
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where("id", "=", escalation.id)
      .execute();
    fake.enqueue({ text: "It expired." });
    const late = await resolve(alice, escalation.id, "continue");
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: "expired" });
    await expect.poll(() => runStatus(alice, runId)).toBe("completed");
    expect((await list(alice)).find((e) => e.id === escalation.id)).toMatchObject({ status: "expired", decidedBy: "expiry" });
    expect(await todoTitles(alice)).not.toContain("Late todo");
  });

  it("two resolves at once: one 200, one 409, and the tool runs once", async () => {
    const alice = await owner();
    const { runId, escalation } = await pausedHeartbeat(alice, "Only once");
    fake.enqueue({ text: "Done once." });
    const answers = await Promise.all([resolve(alice, escalation.id, "continue"), resolve(alice, escalation.id, "continue")]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    await expect.poll(() => runStatus(alice, runId)).toBe("completed");
    expect((await todoTitles(alice)).filter((title) => title === "Only once")).toHaveLength(1);
  });

  it("another owner's escalation is a 404 to read and to resolve; bad input is a 400", async () => {
    const alice = await owner();
    const mallory = await t.addUser(`mallory${n}`);
    const { escalation } = await pausedHeartbeat(alice, "Private");
    expect((await api(mallory, "GET", `/escalations/${escalation.id}`)).status).toBe(404);
    expect((await resolve(mallory, escalation.id, "continue")).status).toBe(404);
    expect((await resolve(mallory, escalation.id, "continue", "/net")).status).toBe(404);
    expect(await list(mallory)).toEqual([]);
    expect((await api(alice, "POST", `/escalations/${escalation.id}/resolve`, { decision: "maybe" })).status).toBe(400);
    expect((await api(alice, "GET", "/escalations?status=waiting")).status).toBe(400);
    // Huge: a body past the limit is a 413, an overlong id a 400; the escalation is still pending.
    const huge = await api(alice, "POST", `/escalations/${escalation.id}/resolve`, { decision: "continue", pad: "p".repeat(3_000_000) });
    expect([huge.status, huge.body.error]).toEqual([413, "payload_too_large"]);
    expect((await api(alice, "GET", `/escalations/esc_${"x".repeat(5_000)}`)).status).toBe(400);
    expect((await api(alice, "GET", `/escalations/${escalation.id}`)).body).toMatchObject({ escalation: { status: "pending" } });
    expect((await alice.client.raw("setHeartbeatPolicy", { body: { toolPolicy: { create_todo: "maybe" } } as never })).status).toBe(400);
    fake.enqueue({ text: "Stopped." });
    expect((await resolve(alice, escalation.id, "stop")).status).toBe(200);
  });

  it("a decision claimed before a restart is resumed after it, and the recorded call still runs once", async () => {
    const alice = await owner();
    const { runId, escalation } = await pausedHeartbeat(alice, "After restart");
    // The claim as a resolve makes it, with the instance gone before it resumed the run.
    await t.server.context.db
      .updateTable("escalations")
      .set({ status: "continued", decided_at: new Date().toISOString(), decided_by: String(alice.userId) })
      .where("id", "=", escalation.id)
      .execute();
    await t.restart();
    fake.enqueue({ text: "Added after the restart." });
    // Two sweeps at once (two instances): the run's claim lets one resume it.
    await Promise.all([sweepEscalations(t.server.context), sweepEscalations(t.server.context)]);
    await expect.poll(() => runStatus(alice, runId)).toBe("completed");
    expect((await todoTitles(alice)).filter((title) => title === "After restart")).toHaveLength(1);
    // Resuming again (a crash after the tool ran) replays the recorded outcome instead of running it.
    const row = await t.server.context.db
      .selectFrom("escalations")
      .select(["tool_state", "tool_result"])
      .where("id", "=", escalation.id)
      .executeTakeFirstOrThrow();
    expect(row.tool_state).toBe("done");
    expect(JSON.parse(row.tool_result as string)).toMatchObject({ ok: true });
  });

  it("agent RPC: a tool the owner's permission says ask for pauses; continue runs it and the answer reaches the caller", async () => {
    const owner1 = await t.addUser(`rpcowner${++n}`);
    const caller = await t.addUser(`rpccaller${n}`);
    await grantAgentAccess(t, caller, owner1, { todosAccess: { access: "create" }, toolPolicy: { create_todo: "ask" } });
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: "From a contact" } }] });
    const sent = await api(caller, "POST", "/agent/message", { to: `${owner1.username}_coo`, message: "Please add a todo" });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ mode: "agent", status: "requires_action", response: null });
    const [escalation] = await list(owner1, "pending");
    expect(escalation).toMatchObject({ source: { type: "agent_rpc", id: String(caller.userId) }, toolName: "create_todo" });
    expect(escalation?.summary).toContain(`${caller.username}'s agent`);
    fake.enqueue({ text: "Added it for you." });
    expect((await resolve(owner1, (escalation as WireEscalation).id, "continue")).status).toBe(200);
    await expect.poll(async () => (await todoTitles(owner1)).includes("From a contact")).toBe(true);
    const conversationId = sent.body.conversationId as number;
    await expect
      .poll(async () => JSON.stringify((await api(caller, "GET", `/conversations/${conversationId}`)).body))
      .toContain("Added it for you.");

    // The same over A2A (v0.3 message/send): a task in INPUT_REQUIRED naming the escalation.
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: "Over A2A" } }] });
    const a2a = (method: string, text: string) =>
      t.fetch(`/a2a/${owner1.username}_coo`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${caller.apiKey}` },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method,
          params: { message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text }] } },
        }),
      });
    const sentOverA2A = await a2a("message/send", "Another todo");
    const task = (await sentOverA2A.json()) as {
      result: { kind: string; status: { state: string }; metadata: { escalationIds: string[] } };
    };
    expect(task.result).toMatchObject({ kind: "task", status: { state: "input-required" } });
    const [waiting] = await list(owner1, "pending");
    expect(task.result.metadata.escalationIds).toEqual([waiting?.id]);
    fake.enqueue({ text: "Not added." });
    expect((await resolve(owner1, waiting?.id as string, "stop")).status).toBe(200);
    // That resume has had its model answer before the next is queued.
    await expect
      .poll(async () => JSON.stringify((await api(caller, "GET", `/conversations/${conversationId}`)).body))
      .toContain("Not added.");

    // Over message/stream: the text so far as working updates, then the stream ends INPUT_REQUIRED.
    fake.enqueue({ text: "Adding it now.", toolCalls: [{ name: "create_todo", args: { title: "Streamed" } }] });
    const frames = (await (await a2a("message/stream", "Stream it")).text())
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => (JSON.parse(line.slice(5)) as { result: { kind: string; status: { state: string }; metadata?: unknown } }).result);
    expect(frames.map((frame) => frame.kind)).toEqual(["task", ...frames.slice(1).map(() => "status-update")]);
    expect(frames.length).toBeGreaterThan(2);
    expect(frames.slice(1, -1).every((frame) => frame.status.state === "working")).toBe(true);
    const streamed = await list(owner1, "pending");
    expect(frames.at(-1)).toMatchObject({ status: { state: "input-required" }, metadata: { escalationIds: [streamed[0]?.id] } });
    fake.enqueue({ text: "Not added." });
    expect((await resolve(owner1, streamed[0]?.id as string, "stop")).status).toBe(200);
  });

  it("a bridge's tool approval waiting for the owner is in the escalation list; resolving it there decides the approval", async () => {
    const { bob, bobBridge, alice } = await agentPair(t, { alice: `brA${++n}`, bob: `brB${n}` });
    await bridgeHeartbeat(t, bobBridge);
    const grant = await openGrant(t, alice.apiKey, bob, { requestedTtlMinutes: 30 });
    const asked = await call<{ approvalId: string }>(t, bobBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      communicationSessionId: grant.communicationSessionId,
      toolName: "Bash",
      toolInputSummary: "run ls",
    });
    expect(asked.status).toBe(201);
    const { approvalId } = asked.body;
    const pending = await list(bob, "pending");
    expect(pending).toEqual([expect.objectContaining({ id: approvalId, source: { type: "bridge", id: grant.communicationSessionId } })]);
    expect((await userEvents(t, bob)).some((e) => e.type === "escalation.requested")).toBe(true);
    expect((await resolve(bob, approvalId, "continue")).body).toMatchObject({ escalation: { status: "continued" } });
    const approval = await call<{ status: string; decision: string }>(t, bob.apiKey, "GET", `/local-agent/tool-approvals/${approvalId}`);
    expect(approval.body).toMatchObject({ status: "allowed", decision: "allow" });
    expect((await resolve(bob, approvalId, "stop")).body).toMatchObject({ error: "already_resolved" });
    // One left alone expires (the approvals' own 5 minutes): expired here too, with its resolved event.
    const second = await call<{ approvalId: string }>(t, bobBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      communicationSessionId: grant.communicationSessionId,
      toolName: "Write",
      toolInputSummary: "write a file",
    });
    await t.server.context.db
      .updateTable("tool_approvals")
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where("id", "=", second.body.approvalId)
      .execute();
    expect((await list(bob)).find((e) => e.id === second.body.approvalId)).toMatchObject({ status: "expired", decidedBy: "expiry" });
    const resolvedIds = (await userEvents(t, bob))
      .filter((e) => e.type === "escalation.resolved")
      .map((e) => (e.data as { escalation: WireEscalation }).escalation.id);
    expect(resolvedIds).toEqual([approvalId, second.body.approvalId]);
  });
});

describe.skipIf(!POSTGRES_URL)("escalations across two instances (PostgreSQL + Redis)", () => {
  let one: TestServer;
  let two: RunningServer;
  let fake: FakeProvider;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    one = await startTestServer(
      {
        redisUrl: REDIS_URL,
        redisPrefix: randomRedisPrefix(),
        maintenanceIntervalMs: 0,
        modelProvider: "openai-compatible",
        modelBaseUrl: fake.baseUrl,
        model: "fake-escalations",
      },
      "postgres",
    );
    two = await startAnotherInstance(one);
  });
  afterAll(async () => {
    await two?.close();
    await one?.stop();
    await fake?.close();
  });

  it("a resolve on each instance at once: one 200, one 409; the tool runs once and the run completes once", async () => {
    const alice = await one.addUser("alice");
    await alice.client.call("init");
    await alice.client.call("setHeartbeatPolicy", { body: { tier: "ACTIONS", toolPolicy: { create_todo: "ask" } } });
    fake.enqueue({ toolCalls: [{ name: "create_todo", args: { title: "Two doors" } }] });
    const { result: run } = await alice.client.call("runHeartbeat", { body: {} });
    expect(run.status).toBe("requires_action");
    const listed = await call<{ escalations: WireEscalation[] }>(one, alice.apiKey, "GET", "/escalations?status=pending");
    const id = listed.body.escalations[0]?.id as string;
    fake.enqueue({ text: "Added once." });
    const resolveOn = (url: string) =>
      fetch(`${url}/escalations/${id}/resolve`, {
        method: "POST",
        headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ decision: "continue" }),
      }).then((response) => response.status);
    const statuses = await Promise.all([resolveOn(one.server.apiUrl), resolveOn(two.apiUrl)]);
    expect(statuses.sort()).toEqual([200, 409]);
    await expect.poll(async () => (await alice.client.call("getHeartbeatRun", { params: { id: run.runId } })).run.status).toBe("completed");
    const todos = (await alice.client.call("listTodos", {})).result.todos.filter((todo) => todo.title === "Two doors");
    expect(todos).toHaveLength(1);
    expect(fake.pending).toBe(0);
  });
});
