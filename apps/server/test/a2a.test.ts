import { randomUUID } from "node:crypto";
import { type Message, type Task, TaskState, type TaskStatusUpdateEvent } from "@a2a-js/sdk";
import { type Client, ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { ALL_SCOPES } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey } from "../src/auth/api-keys";
import { setPassword } from "../src/auth/passwords";
import { textOf, userMessage } from "./a2a-messages";
import { grantAgentAccess, ok, storages } from "./delegation-fixture";
import { type FakeProvider, startFakeOpenAI } from "./fakes/fake-openai";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { authorize, Browser, pkce, registerClient, tokenRequest } from "./oauth-flow";

/**
 * A2A for a person's agent, driven by the official SDK's client: the card, `message/send` and
 * `message/stream` answered through the agent RPC of `POST /agent/message` under the owner's
 * grant, and every refusal (no grant, unknown agent, bad JSON-RPC, huge payloads, a key revoked
 * mid-run) a clear 4xx or JSON-RPC error with nothing run.
 */
const ANSWER = "The alpha launch is in March.";

const isTask = (result: Message | Task): result is Task => "status" in result;

describe.each(storages("a2a suite"))("A2A for a person's agent (%s)", (storage) => {
  let t: TestServer;
  let fake: FakeProvider;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  /** The SDK's client for `handle`, found through its card, sending `token` as a bearer credential. */
  const clientFor = (handle: string, token: string): Promise<Client> => {
    const fetchImpl: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${token}`);
      return fetch(input, { ...init, headers });
    };
    return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(
      `${t.server.url}/a2a/${handle}/.well-known/agent-card.json`,
      "",
    );
  };

  const rpc = (handle: string, token: string | null, body: string, headers: Record<string, string> = {}) =>
    t.fetch(`/a2a/${handle}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body,
    });

  const conversationsOf = async (user: TestUser) =>
    (await ok<{ conversations: { messages: { content: string }[] }[] }>(t, user.apiKey, "GET", "/conversations?view=coo")).conversations;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ defaultReply: { text: ANSWER } });
    t = await startTestServer({ modelProvider: "openai-compatible", modelBaseUrl: fake.baseUrl, model: "fake" }, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    carol = await t.addUser("carol");
    await ok(t, alice.apiKey, "POST", "/init", {});
    await grantAgentAccess(t, bob, alice);
  });
  afterAll(async () => {
    await t?.stop();
    await fake?.close();
  });

  it("publishes a v1 card without a credential, naming bearer API keys and OAuth", async () => {
    const response = await t.fetch("/a2a/alice_coo/.well-known/agent-card.json");
    expect(response.status).toBe(200);
    const card = await response.json();
    expect(card).toMatchObject({
      name: "alice's agent",
      supportedInterfaces: [
        { url: `${t.server.url}/a2a/alice_coo`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: `${t.server.url}/a2a/alice_coo`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      ],
      capabilities: { streaming: true },
      securitySchemes: {
        apiKey: { httpAuthSecurityScheme: { scheme: "Bearer" } },
        oauth: { oauth2SecurityScheme: { flows: { authorizationCode: { tokenUrl: `${t.server.url}/oauth/token`, pkceRequired: true } } } },
      },
      securityRequirements: [{ schemes: { apiKey: {} } }, { schemes: { oauth: { list: ["agent.message:send"] } } }],
    });
    expect((card as { skills: unknown[] }).skills).toHaveLength(1);
    // An unknown agent, and a handle that names a person rather than their agent, are 404, card and endpoint alike.
    for (const path of ["/a2a/nobody_coo/.well-known/agent-card.json", "/a2a/alice/.well-known/agent-card.json"]) {
      expect((await t.fetch(path)).status).toBe(404);
    }
    expect((await t.fetch("/a2a/alice_coo")).status).toBe(405);
    const missing = await rpc("nobody_coo", bob.apiKey, "{}");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ jsonrpc: "2.0", error: { data: { error: "agent_not_found" } } });
  });

  it("lists the cards the caller may reach", async () => {
    const list = async (user: TestUser) =>
      ((await (await t.fetch("/a2a", { headers: { authorization: `Bearer ${user.apiKey}` } })).json()) as { agents: { name: string }[] })
        .agents;
    expect((await list(bob)).map((card) => card.name)).toEqual(["alice's agent"]);
    expect(await list(carol)).toEqual([]);
    expect((await t.fetch("/a2a")).status).toBe(401);
  });

  it("answers message/send through the agent RPC, stored like POST /agent/message", async () => {
    const client = await clientFor("alice_coo", bob.apiKey);
    const requestsBefore = fake.requests.length;
    const result = await client.sendMessage(userMessage("When is the alpha launch?"));
    expect(isTask(result)).toBe(false);
    expect(textOf(result as Message)).toBe(ANSWER);
    expect((result as Message).metadata).toMatchObject({ agentName: "alice_coo", toolsUsed: [] });
    expect(fake.requests.length).toBe(requestsBefore + 1);
    // The same exchange the agent RPC stores, in alice's and bob's shared conversation.
    const contents = (await conversationsOf(alice)).flatMap((c) => c.messages.map((m) => m.content));
    expect(contents).toEqual(expect.arrayContaining(["When is the alpha launch?", ANSWER]));
  });

  it("answers message/stream as it is written: a working task, status updates with the text, then completed", async () => {
    const client = await clientFor("alice_coo", bob.apiKey);
    const events = [];
    for await (const event of client.sendMessageStream(userMessage("And the beta?"))) events.push(event);
    const cases = events.map((event) => event.payload?.$case);
    expect(cases[0]).toBe("task");
    expect(new Set(cases.slice(1))).toEqual(new Set(["statusUpdate"]));
    const updates = events.slice(1).map((event) => (event.payload?.value as TaskStatusUpdateEvent | undefined)?.status);
    const last = updates.pop();
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.every((status) => status?.state === TaskState.TASK_STATE_WORKING)).toBe(true);
    // The working updates carry the text as it came; the last one the whole answer.
    expect(updates.map((status) => textOf(status?.message)).join("")).toBe(ANSWER);
    expect(last?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(last?.message)).toBe(ANSWER);
    expect(last?.message?.metadata).toMatchObject({ agentName: "alice_coo", toolsUsed: [] });
  });

  it("answers v0.3 clients' message/send on the same endpoint", async () => {
    const response = await rpc(
      "alice_coo",
      bob.apiKey,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "message/send",
        params: { message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "Hi" }] } },
      }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: 7,
      result: { kind: "message", role: "agent", parts: [{ kind: "text", text: ANSWER }] },
    });
  });

  it("takes an OAuth access token allowed to send messages as the person, and refuses one that is not", async () => {
    const password = "correct horse battery";
    await setPassword(t.server.context.db, bob.userId, password);
    const app = await registerClient(t);
    const tokenFor = async (scope: string) => {
      const { verifier, challenge } = pkce();
      const callback = await authorize(t, new Browser(t), app, { scope, username: bob.username, password, challenge });
      const code = callback.searchParams.get("code") ?? "";
      const fields = {
        grant_type: "authorization_code",
        code,
        redirect_uri: app.redirectUri,
        client_id: app.clientId,
        code_verifier: verifier,
      };
      return (await tokenRequest(t, fields)).body.access_token ?? "";
    };
    const allowed = await clientFor("alice_coo", await tokenFor("agent.message:send"));
    expect(textOf((await allowed.sendMessage(userMessage("Via OAuth?"))) as Message)).toBe(ANSWER);
    const requestsBefore = fake.requests.length;
    const refused = await rpc("alice_coo", await tokenFor("os.notes:read"), "{}");
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { data: { error: "insufficient_scope" } } });
    expect(fake.requests.length).toBe(requestsBefore);
  });

  it("refuses a caller without a grant: 403, nothing run, nothing stored", async () => {
    const requestsBefore = fake.requests.length;
    const client = await clientFor("alice_coo", carol.apiKey);
    await expect(client.sendMessage(userMessage("What is alice's vault code?"))).rejects.toThrow(/403|not open to you/);
    const raw = await rpc(
      "alice_coo",
      carol.apiKey,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } },
      }),
      { "a2a-version": "1.0" },
    );
    expect(raw.status).toBe(403);
    // Refused before the body is read, so the answer cannot echo the request's id.
    expect(await raw.json()).toMatchObject({ id: null, error: { code: -32000, data: { error: "agent_permission_required" } } });
    expect(fake.requests.length).toBe(requestsBefore);
    expect(await conversationsOf(carol)).toEqual([]);
    // Nor can anyone ask their own agent this way, nor without a credential.
    expect((await rpc("alice_coo", alice.apiKey, "{}")).status).toBe(403);
    expect((await rpc("alice_coo", null, "{}")).status).toBe(401);
  });

  it("answers bad JSON-RPC and huge payloads with 4xx or JSON-RPC errors, never a 500", async () => {
    const requestsBefore = fake.requests.length;
    const send = async (body: string, headers: Record<string, string> = { "a2a-version": "1.0" }) => {
      const response = await rpc("alice_coo", bob.apiKey, body, headers);
      return { status: response.status, body: (await response.json()) as { error?: { code: number; data?: { error?: string } } } };
    };
    expect(await send("{not json")).toMatchObject({ status: 400, body: { error: { code: -32700 } } });
    expect((await send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "NoSuchMethod", params: {} }))).body.error?.code).toBe(-32601);
    const badParams = await send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "SendMessage", params: { message: 5 } }));
    expect(badParams).toMatchObject({ status: 200, body: { error: { code: -32602 } } });
    expect(await send(JSON.stringify([1, 2, 3]))).toMatchObject({ status: 200, body: { error: { code: -32602 } } });
    // No task outlives its request: there is none to get.
    const getTask = await send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "GetTask", params: { id: "nope" } }));
    expect(getTask).toMatchObject({ status: 200, body: { error: { code: -32001 } } });
    // Past the body limit: 413 before anything is parsed.
    const huge = await send(
      JSON.stringify({ jsonrpc: "2.0", id: 5, method: "SendMessage", params: { text: "x".repeat(2 * 1024 * 1024) } }),
    );
    expect(huge).toMatchObject({ status: 413, body: { error: { data: { error: "payload_too_large" } } } });
    // Within it, but longer than an agent message may be: a rejected task saying why, no run.
    const client = await clientFor("alice_coo", bob.apiKey);
    const long = await client.sendMessage(userMessage("y".repeat(50_000)));
    expect(isTask(long) && long.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(textOf((long as Task).status?.message)).toMatch(/at most/);
    expect(fake.requests.length).toBe(requestsBefore);
  });

  it("stops a run whose key is revoked mid-stream: the stream ends failed and nothing is stored", async () => {
    const key = await createApiKey(t.server.context.db, { userId: bob.userId, scopes: ALL_SCOPES });
    const client = await clientFor("alice_coo", key.apiKey);
    const release = fake.hold();
    const requestsBefore = fake.requests.length;
    const events = (async () => {
      const seen = [];
      for await (const event of client.sendMessageStream(userMessage("Revoked soon"))) seen.push(event);
      return seen;
    })();
    await fake.until(() => fake.requests.length > requestsBefore);
    await revokeApiKey(t.server.context.db, key.keyId);
    const seen = await events;
    release();
    expect(seen.map((event) => event.payload?.$case)).toEqual(["task"]);
    const task = seen[0]?.payload?.value as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.metadata).toMatchObject({ error: "credential_revoked" });
    const contents = (await conversationsOf(bob)).flatMap((c) => c.messages.map((m) => m.content));
    expect(contents).not.toContain("Revoked soon");
  });
});
