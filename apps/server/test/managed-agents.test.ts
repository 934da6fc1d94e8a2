import { type Message, TaskState, type TaskStatusUpdateEvent } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { workspaceDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textOf, userMessage } from "./a2a-messages";
import { call, grantAgentAccess, ok, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { openDoc } from "./sync-client";

/**
 * Managed agents, black-box: the record and its keys, a key whose principal is the agent (its
 * grant, never its owner's), handles sharing one space with usernames, the owner's tool policy,
 * pausing, and reaching an agent by `POST /agent/message` and A2A under the agent's grant
 * intersected with the owner's permission for the caller. The local model calls the tools.
 */
interface Agent {
  id: number;
  handle: string;
  name: string;
  status: "active" | "paused";
  grant: { notesAccess: { scope: string; folderIds: number[]; access: string }; todoAccess: { read: boolean; create: boolean } };
  toolPolicy: Record<string, string>;
}
interface Key {
  keyId: string;
  label: string | null;
  revokedAt: string | null;
}
interface Run {
  id: number;
  source: string;
  callerUserId: number | null;
  status: string;
  input: string;
  output: string;
  toolsUsed: string[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
}

const TODOS_READ = { notesAccess: { scope: "none" }, todoAccess: { read: true, create: false } };
const TODOS_QUESTION = "What are my todos?";

describe.each(storages("managed agents suite"))("managed agents (%s)", (storage) => {
  let t: TestServer;
  let serial = 0;
  const user = async (name: string) => {
    const created = await t.addUser(`${name}${++serial}`);
    await ok(t, created.apiKey, "POST", "/init", {});
    return created;
  };
  const handle = (name: string) => `${name}-${++serial}`;

  async function createAgent(owner: TestUser, body: Record<string, unknown>) {
    return ok<{ agent: Agent; key: Key; apiKey: string }>(t, owner.apiKey, "POST", "/managed-agents", body);
  }
  const runs = async (owner: TestUser, id: number) =>
    (await ok<{ runs: Run[] }>(t, owner.apiKey, "GET", `/managed-agents/${id}/runs`)).runs;
  const run = async (token: string, id: number, input: string) =>
    (await ok<{ run: Run }>(t, token, "POST", `/managed-agents/${id}/runs`, { input, stream: false })).run;

  beforeAll(async () => {
    t = await startTestServer({}, storage);
  });
  afterAll(() => t?.stop());

  it("creates, lists, reads, changes and deletes an agent; its key is shown once and works until revoked", async () => {
    const alice = await user("alice");
    const name = handle("helper");
    const made = await createAgent(alice, { handle: name, name: "Helper", instructions: "Be brief.", grant: TODOS_READ });
    expect(made.apiKey).toMatch(/^svc_sk_/);
    expect(made.agent).toMatchObject({ handle: name, name: "Helper", status: "active", model: "default", namespaces: ["notes", "todos"] });
    expect(made.agent.grant).toEqual({
      notesAccess: { scope: "none", folderIds: [], access: "read" },
      todoAccess: { read: true, create: false },
    });

    const listed = await ok<{ agents: Agent[] }>(t, alice.apiKey, "GET", "/managed-agents");
    expect(listed.agents.map((a) => a.handle)).toEqual([name]);
    const secret = made.apiKey.slice(-12);
    expect(JSON.stringify(listed)).not.toContain(secret);
    const keys = await ok<{ keys: Key[] }>(t, alice.apiKey, "GET", `/managed-agents/${made.agent.id}/keys`);
    expect(keys.keys).toHaveLength(1);
    expect(JSON.stringify(keys)).not.toContain(secret);
    // Stored hashed: no row holds the secret.
    const row = await t.server.context.db.selectFrom("api_keys").selectAll().where("id", "=", made.key.keyId).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secret);

    const patched = await ok<{ agent: Agent }>(t, alice.apiKey, "PATCH", `/managed-agents/${made.agent.id}`, {
      name: "Helper two",
      toolPolicy: { list_todos: "allow" },
    });
    expect(patched.agent).toMatchObject({ name: "Helper two", handle: name, toolPolicy: { list_todos: "allow" } });
    expect((await call(t, made.apiKey, "GET", "/os/todos")).status).toBe(200);

    const second = await ok<{ key: Key; apiKey: string }>(t, alice.apiKey, "POST", `/managed-agents/${made.agent.id}/keys`, {
      label: "ci",
    });
    expect(second.key.label).toBe("ci");
    const revoked = await ok<{ key: Key }>(t, alice.apiKey, "DELETE", `/managed-agents/${made.agent.id}/keys/${made.key.keyId}`);
    expect(revoked.key.revokedAt).toEqual(expect.any(String));
    expect((await call(t, made.apiKey, "GET", "/os/todos")).status).toBe(401);
    expect((await call(t, second.apiKey, "GET", "/os/todos")).status).toBe(200);

    await ok(t, alice.apiKey, "DELETE", `/managed-agents/${made.agent.id}`);
    expect((await call(t, alice.apiKey, "GET", `/managed-agents/${made.agent.id}`)).status).toBe(404);
    expect((await call(t, second.apiKey, "GET", "/os/todos")).status).toBe(401);
  });

  it("closes as failed a run an instance stopped in the middle of, once past the run time limit", async () => {
    const alice = await user("alice");
    const made = await createAgent(alice, { handle: handle("crashed"), name: "Crashed", instructions: "x", grant: TODOS_READ });
    const { db } = t.server.context;
    const row = (age: number) => ({
      agent_id: made.agent.id,
      owner_id: alice.userId,
      source: "runs",
      status: "running" as const,
      input: `left ${age} ms ago`,
      output: "",
      tools_used: "[]",
      prompt_tokens: 0,
      completion_tokens: 0,
      model: "local",
      created_at: new Date(Date.now() - age).toISOString(),
    });
    // As a `kill -9` leaves it: one run far past the limit, one that may still be working.
    await db
      .insertInto("managed_agent_runs")
      .values([row(t.server.context.config.agentTimeoutMs + 120_000), row(1000)])
      .execute();
    await t.server.context.maintenance.runAll();
    const statuses = (await runs(alice, made.agent.id)).map((r) => [r.input, r.status]);
    expect(statuses).toContainEqual([expect.stringMatching(/^left 1000 ms/), "running"]);
    expect(statuses.filter(([, status]) => status === "failed")).toHaveLength(1);
  });

  it("an agent's key is the agent: its grant only, never its owner's routes; another owner's objects are 404", async () => {
    const alice = await user("alice");
    const bob = await user("bob");
    const mine = await createAgent(alice, { handle: handle("scout"), grant: TODOS_READ });
    const sibling = await createAgent(alice, { handle: handle("other") });
    const bobs = await createAgent(bob, { handle: handle("bobs") });
    const key = mine.apiKey;
    const id = mine.agent.id;

    // Its grant: todos read; no notes route (folders and Memory cannot be narrowed there).
    expect((await call(t, key, "GET", "/os/todos")).status).toBe(200);
    expect((await call(t, key, "GET", "/os/notes")).body).toMatchObject({ error: "insufficient_scope" });
    expect((await call(t, key, "POST", "/os/todos", { title: "x" })).status).toBe(403);
    // Never keys, agents or webhooks; never its own grant.
    expect((await call(t, key, "POST", "/managed-agents", { handle: handle("spawn") })).status).toBe(403);
    expect((await call(t, key, "POST", `/managed-agents/${id}/keys`, {})).status).toBe(403);
    expect((await call(t, key, "GET", `/managed-agents/${id}/keys`)).status).toBe(403);
    const selfPatch = await call(t, key, "PATCH", `/managed-agents/${id}`, { grant: { notesAccess: { scope: "all" } } });
    expect(selfPatch.status).toBe(403);
    expect((await call(t, key, "DELETE", `/managed-agents/${id}`)).status).toBe(403);
    expect((await call(t, key, "POST", "/webhooks", { url: "https://example.com/hook", events: ["message.received"] })).status).toBe(403);
    // Routes that act as the person (messaging, the account, MCP, A2A) are not the agent's.
    expect((await call(t, key, "POST", "/agent/message", { to: bob.username, message: "hi" })).body).toMatchObject({
      error: "agent_not_allowed",
    });
    expect((await call(t, key, "GET", "/account/connected-apps")).status).toBe(403);
    const mcp = await t.fetch("/mcp", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(403);
    // The event stream is the person's; sync does not take an agent's key at all (its owner's workspace would open).
    expect((await t.fetch("/api/v1/agent/stream", { headers: { authorization: `Bearer ${key}` } })).status).toBe(403);
    const sync = await openDoc(t.server.syncUrl, key, workspaceDocName(alice.userId));
    sync.close();
    expect(sync.outcome).toBe("refused");

    // Itself: readable and runnable. Its sibling and another owner's agent: 404, as is another owner's agent to alice.
    expect((await ok<{ agents: Agent[] }>(t, key, "GET", "/managed-agents")).agents.map((a) => a.id)).toEqual([id]);
    expect((await call(t, key, "GET", `/managed-agents/${id}`)).status).toBe(200);
    expect((await call(t, key, "GET", `/managed-agents/${sibling.agent.id}`)).status).toBe(404);
    expect((await call(t, key, "GET", `/managed-agents/${bobs.agent.id}/runs`)).status).toBe(404);
    expect((await call(t, alice.apiKey, "GET", `/managed-agents/${bobs.agent.id}`)).status).toBe(404);
    expect((await call(t, alice.apiKey, "PATCH", `/managed-agents/${bobs.agent.id}`, { name: "mine" })).status).toBe(404);
    expect((await call(t, alice.apiKey, "DELETE", `/managed-agents/${bobs.agent.id}/keys/${bobs.key.keyId}`)).status).toBe(404);
    expect((await call(t, alice.apiKey, "POST", `/managed-agents/${bobs.agent.id}/runs`, { input: "hi" })).status).toBe(404);

    const own = await run(key, id, TODOS_QUESTION);
    expect(own).toMatchObject({ status: "completed", source: "runs", callerUserId: null, toolsUsed: ["list_todos"] });
  });

  it("refuses handles that collide with a username, another agent, the _coo form or a reserved word, or break the pattern", async () => {
    const alice = await user("alice");
    const taken = handle("taken");
    await createAgent(alice, { handle: taken });
    const cases: [string, number, string][] = [
      [alice.username, 409, "handle_taken"],
      [taken, 409, "handle_taken"],
      [`${alice.username}_coo`, 400, "invalid_request"],
      ["admin", 400, "reserved_handle"],
      ["a", 400, "invalid_request"],
      ["9lives", 400, "invalid_request"],
      ["UPPER", 400, "invalid_request"],
      [`x${"y".repeat(32)}`, 400, "invalid_request"],
    ];
    for (const [name, status, error] of cases) {
      const response = await call(t, alice.apiKey, "POST", "/managed-agents", { handle: name });
      expect({ name, status: response.status, error: (response.body as { error: string }).error }).toEqual({ name, status, error });
    }
    // Two creations of one handle at once (PostgreSQL runs them side by side): one agent, one 409.
    const raced = handle("race");
    const both = await Promise.all([0, 1].map(() => call(t, alice.apiKey, "POST", "/managed-agents", { handle: raced })));
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    // A person cannot take an agent's handle as a username either.
    await expect(t.addUser(taken)).rejects.toThrow(/taken/);
    // A folder that is not the owner's own is a 404; an unknown model a 400.
    const bob = await user("bob");
    const bobFolder = (await bob.client.call("createFolder", { body: { name: "Bob's" } })).folder.id;
    const foreign = await call(t, alice.apiKey, "POST", "/managed-agents", {
      handle: handle("nosy"),
      grant: { notesAccess: { scope: "folders", folderIds: [bobFolder] } },
    });
    expect(foreign.status).toBe(404);
    expect((await call(t, alice.apiKey, "POST", "/managed-agents", { handle: handle("odd"), model: "nope" })).status).toBe(400);
    // Huge payloads: too long instructions or run input are a 400, a body past the limit a 413; nothing is made or run.
    const before = (await ok<{ agents: Agent[] }>(t, alice.apiKey, "GET", "/managed-agents")).agents.length;
    const long = await call(t, alice.apiKey, "POST", "/managed-agents", { handle: handle("long"), instructions: "i".repeat(20_001) });
    expect([long.status, (long.body as { error: string }).error]).toEqual([400, "invalid_request"]);
    const huge = await call(t, alice.apiKey, "POST", "/managed-agents", { handle: handle("huge"), description: "d".repeat(3_000_000) });
    expect([huge.status, (huge.body as { error: string }).error]).toEqual([413, "payload_too_large"]);
    expect((await ok<{ agents: Agent[] }>(t, alice.apiKey, "GET", "/managed-agents")).agents).toHaveLength(before);
    const runner = await createAgent(alice, { handle: handle("runner") });
    const tooLong = await call(t, runner.apiKey, "POST", `/managed-agents/${runner.agent.id}/runs`, {
      input: "x".repeat(100_001),
      stream: false,
    });
    expect(tooLong.status).toBe(400);
    expect(await runs(alice, runner.agent.id)).toEqual([]);
  });

  it("runs under its tool policy: deny removes the tool; runs are recorded with status, tools and tokens", async () => {
    const alice = await user("alice");
    await alice.client.call("createTodo", { body: { title: "Call the bank" } });
    const made = await createAgent(alice, { handle: handle("todo"), grant: TODOS_READ });
    const allowed = await run(alice.apiKey, made.agent.id, TODOS_QUESTION);
    expect(allowed.toolsUsed).toEqual(["list_todos"]);
    expect(allowed.output).toContain("Call the bank");

    await ok(t, alice.apiKey, "PATCH", `/managed-agents/${made.agent.id}`, { toolPolicy: { list_todos: "deny" } });
    const denied = await run(alice.apiKey, made.agent.id, TODOS_QUESTION);
    expect(denied.status).toBe("completed");
    expect(denied.toolsUsed).toEqual([]);
    expect(denied.output).not.toContain("Call the bank");

    const listed = await runs(alice, made.agent.id);
    expect(listed.map((r) => [r.id, r.status, r.toolsUsed])).toEqual([
      [denied.id, "completed", []],
      [allowed.id, "completed", ["list_todos"]],
    ]);
    expect(listed[1]?.usage.totalTokens).toBeGreaterThanOrEqual(0);
    // Model usage is recorded under the managed_agent purpose.
    const usage = await t.server.context.db
      .selectFrom("model_usage")
      .select("purpose")
      .where("user_id", "=", alice.userId)
      .where("purpose", "=", "managed_agent")
      .execute();
    expect(usage.length).toBeGreaterThan(0);

    // The stream: the chat stream's lines, with the run's id.
    const response = await t.fetch(`/api/v1/managed-agents/${made.agent.id}/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ input: "Hello", stream: true }),
    });
    expect(response.headers.get("content-type")).toContain("text/plain");
    const lines = (await response.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; runId?: number; status?: string });
    expect(lines[0]).toMatchObject({ type: "run-start", runId: expect.any(Number) });
    expect(lines.at(-1)).toMatchObject({ type: "completion", runId: lines[0]?.runId, status: "completed" });
    expect(lines.some((line) => line.type === "text-delta")).toBe(true);
  });

  it("a tool its policy says ask for pauses the run as an escalation (managed_agent); continue runs it once, stop ends the run without it", async () => {
    const alice = await user("alice");
    await ok(t, alice.apiKey, "POST", "/os/todos", { title: "Plan the launch" });
    const made = await createAgent(alice, { handle: handle("asker"), grant: TODOS_READ, toolPolicy: { list_todos: "ask" } });
    const id = made.agent.id;
    type Esc = { id: string; status: string; toolName: string; source: { type: string; id: string }; summary: string };
    const pending = async () => (await ok<{ escalations: Esc[] }>(t, alice.apiKey, "GET", "/escalations?status=pending")).escalations;
    const settled = async (runId: number) => {
      await expect.poll(async () => (await runs(alice, id)).find((one) => one.id === runId)?.status, { timeout: 20_000 }).toBe("completed");
      return (await runs(alice, id)).find((one) => one.id === runId) as Run;
    };

    const paused = await run(alice.apiKey, id, TODOS_QUESTION);
    expect(paused).toMatchObject({ status: "requires_action", output: "" });
    const [asked] = await pending();
    expect(asked).toMatchObject({ toolName: "list_todos", source: { type: "managed_agent", id: String(id) } });
    expect(asked?.summary).toContain(`Your agent ${made.agent.handle} wants to list todos`);
    // The agent's own key can never decide for its owner.
    expect((await call(t, made.apiKey, "POST", `/escalations/${asked?.id}/resolve`, { decision: "continue" })).status).toBe(403);
    await ok(t, alice.apiKey, "POST", `/escalations/${asked?.id}/resolve`, { decision: "continue" });
    const resumed = await settled(paused.id);
    expect(resumed.toolsUsed).toEqual(["list_todos"]);
    expect(resumed.output).toContain("Plan the launch");
    expect(resumed.usage.totalTokens).toBeGreaterThan(0);
    expect((await call(t, alice.apiKey, "POST", `/escalations/${asked?.id}/resolve`, { decision: "stop" })).body).toMatchObject({
      error: "already_resolved",
    });

    // By message: the answer says it waits (no response yet), naming the escalation; stop ends it without the call.
    const message = await ok<{ status: string; response: string | null; escalationIds: string[]; runId: number }>(
      t,
      alice.apiKey,
      "POST",
      "/agent/message",
      { to: made.agent.handle, message: TODOS_QUESTION },
    );
    expect(message).toMatchObject({ status: "requires_action", response: null });
    expect(message.escalationIds).toHaveLength(1);
    await ok(t, alice.apiKey, "POST", `/escalations/${message.escalationIds[0]}/resolve`, { decision: "stop" });
    const stopped = await settled(message.runId);
    expect(stopped.output).not.toContain("Plan the launch");
    expect(await pending()).toEqual([]);
  });

  it("a paused agent answers 409 agent_paused everywhere it is reached", async () => {
    const alice = await user("alice");
    const bob = await user("bob");
    await grantAgentAccess(t, bob, alice, { todosAccess: { access: "read" } });
    const made = await createAgent(alice, { handle: handle("sleepy"), grant: TODOS_READ });
    await ok(t, alice.apiKey, "PATCH", `/managed-agents/${made.agent.id}`, { status: "paused" });
    const paused = (response: { status: number; body: unknown }) => {
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({ error: "agent_paused" });
    };
    paused(await call(t, made.apiKey, "GET", "/os/todos"));
    paused(await call(t, alice.apiKey, "POST", `/managed-agents/${made.agent.id}/runs`, { input: "hi" }));
    paused(await call(t, bob.apiKey, "POST", "/agent/message", { to: made.agent.handle, message: "hi" }));
    const a2a = await t.fetch(`/a2a/${made.agent.handle}`, {
      method: "POST",
      headers: { authorization: `Bearer ${bob.apiKey}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(a2a.status).toBe(409);
    expect(await a2a.json()).toMatchObject({ error: { data: { error: "agent_paused" } } });
    expect(await runs(alice, made.agent.id)).toEqual([]);

    await ok(t, alice.apiKey, "PATCH", `/managed-agents/${made.agent.id}`, { status: "active" });
    expect((await call(t, made.apiKey, "GET", "/os/todos")).status).toBe(200);
  });

  it("answers POST /agent/message {to: <handle>} under its grant intersected with the owner's permission for the caller", async () => {
    const alice = await user("alice");
    const bob = await user("bob");
    const carol = await user("carol");
    const shared = (await alice.client.call("createFolder", { body: { name: "Shared" } })).folder.id;
    const secret = (await alice.client.call("createFolder", { body: { name: "Private" } })).folder.id;
    await alice.client.call("createNote", { body: { title: "Alpha plan", content: "The alpha launch is in March.", folderId: shared } });
    await alice.client.call("createNote", {
      body: { title: "Zeta ledger", content: "The alpha launch budget is 7319.", folderId: secret },
    });
    await alice.client.call("createTodo", { body: { title: "Call the bank" } });
    // Bob may read all alice's notes but not her todos; the agent reads the Shared folder and todos.
    await grantAgentAccess(t, bob, alice);
    const made = await createAgent(alice, {
      handle: handle("desk"),
      grant: { notesAccess: { scope: "folders", folderIds: [shared], access: "read" }, todoAccess: { read: true, create: false } },
    });
    const ask = (who: TestUser, message: string) =>
      call<{ mode: string; response: string; toolsUsed: string[]; agentName: string; runId: number; error?: string }>(
        t,
        who.apiKey,
        "POST",
        "/agent/message",
        { to: made.agent.handle, message },
      );

    const notes = await ask(bob, "When is the alpha launch?");
    expect(notes.status).toBe(200);
    expect(notes.body).toMatchObject({ mode: "agent", agentName: made.agent.handle });
    expect(notes.body.response).toContain("March");
    expect(notes.body.response).not.toContain("7319");
    // The owner's permission gives bob no todos: the intersection has no todo tool, though the agent's grant does.
    const todos = await ask(bob, TODOS_QUESTION);
    expect(todos.body.toolsUsed).not.toContain("list_todos");
    expect(todos.body.response).not.toContain("Call the bank");
    // Its owner asks it under its grant alone.
    const own = await ask(alice, TODOS_QUESTION);
    expect(own.body.toolsUsed).toEqual(["list_todos"]);
    // No permission from the owner: 403, nothing run.
    const before = (await runs(alice, made.agent.id)).length;
    expect((await ask(carol, "When is the alpha launch?")).body).toMatchObject({ error: "agent_permission_required" });
    const listed = await runs(alice, made.agent.id);
    expect(listed).toHaveLength(before);
    expect(listed.find((r) => r.id === notes.body.runId)).toMatchObject({ source: "agent_message", callerUserId: bob.userId });
  });

  it("publishes an A2A card per agent and answers message/send with the SDK's client", async () => {
    const alice = await user("alice");
    const bob = await user("bob");
    const carol = await user("carol");
    await alice.client.call("createTodo", { body: { title: "Water the plants" } });
    await grantAgentAccess(t, bob, alice, { todosAccess: { access: "read" } });
    const made = await createAgent(alice, { handle: handle("card"), name: "Card agent", grant: TODOS_READ });
    const cardUrl = `${t.server.url}/a2a/${made.agent.handle}/.well-known/agent-card.json`;
    const card = (await (await fetch(cardUrl)).json()) as { name: string; supportedInterfaces: { url: string }[] };
    expect(card.name).toBe("Card agent");
    expect(card.supportedInterfaces[0]?.url).toBe(`${t.server.url}/a2a/${made.agent.handle}`);

    const clientFor = (token: string) => {
      const fetchImpl: typeof fetch = (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set("authorization", `Bearer ${token}`);
        return fetch(input, { ...init, headers });
      };
      return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(cardUrl, "");
    };
    const answer = (await (await clientFor(bob.apiKey)).sendMessage(userMessage(TODOS_QUESTION))) as Message;
    const text = textOf(answer);
    expect(text).toContain("Water the plants");
    expect(answer.metadata).toMatchObject({ agentName: made.agent.handle, toolsUsed: ["list_todos"] });
    expect((await runs(alice, made.agent.id))[0]).toMatchObject({ source: "a2a", callerUserId: bob.userId, status: "completed" });
    // message/stream: the answer comes as it is written (working updates), then completed with the whole of it.
    const streamed = [];
    for await (const event of (await clientFor(bob.apiKey)).sendMessageStream(userMessage(TODOS_QUESTION))) streamed.push(event);
    const statuses = streamed.slice(1).map((event) => (event.payload?.value as TaskStatusUpdateEvent | undefined)?.status);
    const finished = statuses.pop();
    expect(statuses.map((status) => status?.state)).toContain(TaskState.TASK_STATE_WORKING);
    expect(finished?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    // Listed among the cards bob may reach; carol (no permission) and the agent's own key are refused.
    const listed = (await (await t.fetch("/a2a", { headers: { authorization: `Bearer ${bob.apiKey}` } })).json()) as {
      agents: { name: string }[];
    };
    expect(listed.agents.map((a) => a.name)).toContain("Card agent");
    const refuse = async (token: string, status: number) => {
      const response = await t.fetch(`/a2a/${made.agent.handle}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(response.status).toBe(status);
    };
    await refuse(carol.apiKey, 403);
    await refuse(made.apiKey, 403);
  });
});
