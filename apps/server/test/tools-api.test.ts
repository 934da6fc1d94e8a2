import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type RouteDefinition, routes } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NATIVE_TOOLS } from "../src/agent/tools/registry";
import { createApiKey } from "../src/auth/api-keys";
import { chatJson } from "./agent/chat-client";
import { call, ok, storages } from "./delegation-fixture";
import { type FakeProvider, startFakeOpenAI } from "./fakes/fake-openai";
import { startTestServer, type TestServer, type TestUser } from "./harness";

// biome-ignore lint/suspicious/noExplicitAny: answers are checked by shape below
type Json = any;

describe("the tool registry and the route table", () => {
  it("gives every tool exactly the scopes of the REST route that does the same, so no door is wider", () => {
    for (const tool of NATIVE_TOOLS) {
      // Every tool says which route it mirrors (null: none does), so a new tool cannot skip this check.
      expect(tool.route, `${tool.name} names no route`).not.toBeUndefined();
      if (!tool.route) continue;
      const route: RouteDefinition = routes[tool.route];
      const routeScopes = [route.scope, ...(route.alsoRequires ?? [])].sort();
      expect([tool.needs, ...(tool.alsoNeeds ?? [])].sort(), `${tool.name} and ${tool.route}`).toEqual(routeScopes);
    }
  });
});

describe.each(storages("tools API"))("the tool registry over HTTP (%s)", (storage) => {
  let t: TestServer;
  let fake: FakeProvider;
  let alice: TestUser;
  let bob: TestUser;
  /** Alice's key that may only read notes. */
  let aliceReader: TestUser;
  let aliceNote: number;
  let bobNote: number;

  const tools = (user: TestUser, tool: string, params?: Record<string, unknown>) =>
    call<Json>(t, user.apiKey, "POST", "/tools", { tool, params });

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startTestServer({ modelProvider: "openai-compatible", modelBaseUrl: fake.baseUrl, model: "fake" }, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    await bob.client.call("init");
    const reader = await createApiKey(t.server.context.db, { userId: alice.userId, scopes: ["os.notes:read"] });
    aliceReader = { ...alice, apiKey: reader.apiKey };
    aliceNote = (await alice.client.call("createNote", { body: { title: "Zebra plan", content: "The zebra migrates in spring." } })).result
      .note.id;
    bobNote = (await bob.client.call("createNote", { body: { title: "Bob secret", content: "The code is 1234." } })).result.note.id;
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it("lists only the tools the key's scopes allow, with their JSON Schema and the v1 routes", async () => {
    const all = await ok<Json>(t, alice.apiKey, "GET", "/tools");
    const names = all.tools.map((tool: Json) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["search_notes", "edit_note", "create_todo", "list_network", "memory_search"]));
    expect(all.totalTools).toBe(all.tools.length);
    const get = all.tools.find((tool: Json) => tool.name === "get_note_content");
    expect(get).toMatchObject({ namespace: "notes", source: "native", readWrite: "read" });
    expect(get.parameters).toMatchObject({ type: "object", required: ["noteId"], properties: { noteId: { type: "integer" } } });
    expect(all.osEndpoints).toContainEqual({ method: "POST", path: "/tools" });
    expect(all.osEndpoints).toContainEqual({ method: "GET", path: "/os/notes/:id" });
    expect(all.usage).toMatchObject({ windowDays: 30, totalCalls: expect.any(Number), byTool: expect.any(Array) });

    const read = await ok<Json>(t, aliceReader.apiKey, "GET", "/tools");
    const readNames: string[] = read.tools.map((tool: Json) => tool.name);
    expect(readNames).toContain("search_notes");
    expect(readNames.every((name) => ["search_notes", "grep_notes", "get_note_content", "list_notes", "list_folders"].includes(name))).toBe(
      true,
    );
  });

  it("calls a tool by its bare name and by namespace.tool, with the time it took", async () => {
    const bare = await tools(alice, "get_note_content", { noteId: aliceNote });
    expect(bare.status).toBe(200);
    expect(bare.body).toMatchObject({ success: true, tool: "notes.get_note_content", result: { id: aliceNote, title: "Zebra plan" } });
    expect(bare.body.result.markdown).toContain("zebra migrates");
    expect(bare.body.metadata.executionTimeMs).toEqual(expect.any(Number));
    expect(bare.body.metadata.executionTimeMs).toBeGreaterThanOrEqual(0);

    const qualified = await tools(alice, "notes.search_notes", { query: "zebra" });
    expect(qualified.status).toBe(200);
    expect(qualified.body.result.results.map((r: Json) => r.id)).toContain(aliceNote);

    // A legacy shape: edit_note {id, content}.
    const edited = await tools(alice, "edit_note", { id: aliceNote, content: "The zebra stays home." });
    expect(edited.status).toBe(200);
    expect((await tools(alice, "get_note_content", { noteId: aliceNote })).body.result.markdown).toContain("stays home");

    const usage = (await ok<Json>(t, alice.apiKey, "GET", "/tools")).usage;
    expect(usage.byTool).toContainEqual(
      expect.objectContaining({ tool: "notes.get_note_content", calls: 2, failures: 0, lastCalledAt: expect.any(String) }),
    );
    expect(usage.totalCalls).toBeGreaterThanOrEqual(4);
  });

  it("answers 400 for a malformed body and for params failing the tool's schema, naming the field", async () => {
    expect((await call<Json>(t, alice.apiKey, "POST", "/tools", { params: {} })).status).toBe(400);
    expect((await call<Json>(t, alice.apiKey, "POST", "/tools", { tool: "search_notes", params: [1] })).status).toBe(400);
    const bad = await tools(alice, "get_note_content", { noteId: "twelve" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ success: false, error: "invalid_params" });
    expect(bad.body.message).toContain("noteId");
  });

  it("answers 404 for an unknown tool and 403 for a tool the key's scopes do not allow", async () => {
    const unknown = await tools(alice, "launch_rockets", {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("unknown_tool");
    expect((await tools(alice, "todos.search_notes", {})).status).toBe(404);

    const refused = await tools(aliceReader, "edit_note", { id: aliceNote, content: "overwritten" });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: "insufficient_scope" });
    expect(refused.body.message).toContain("os.notes:write");
    expect((await tools(alice, "get_note_content", { noteId: aliceNote })).body.result.markdown).not.toContain("overwritten");
  });

  it("save_snapshot needs os.notes:read as its route does, over POST /tools and /mcp", async () => {
    const snapshotsOnly = await createApiKey(t.server.context.db, {
      userId: alice.userId,
      scopes: ["os.snapshots:read", "os.snapshots:write"],
    });
    const key: TestUser = { ...alice, apiKey: snapshotsOnly.apiKey };
    const snapshots = async () => (await ok<Json>(t, alice.apiKey, "GET", `/os/snapshots/${aliceNote}`)).total;
    const before = await snapshots();
    expect((await call<Json>(t, key.apiKey, "POST", `/os/snapshots/${aliceNote}`, {})).status).toBe(403);
    const refused = await tools(key, "save_snapshot", { noteId: aliceNote });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, error: "insufficient_scope" });
    expect(refused.body.message).toContain("os.notes:read");
    expect((await ok<Json>(t, key.apiKey, "GET", "/tools")).tools.map((tool: Json) => tool.name)).not.toContain("save_snapshot");

    const client = new Client({ name: "tools-api-test", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key.apiKey}` } },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("save_snapshot");
      await expect(client.callTool({ name: "save_snapshot", arguments: { noteId: aliceNote } })).rejects.toThrow(/os\.notes:read/);
    } finally {
      await client.close();
    }
    expect(await snapshots()).toBe(before);
  });

  it("answers 422 with the tool's message when it fails, and never shows another user's note", async () => {
    const theirs = await tools(alice, "get_note_content", { noteId: bobNote });
    expect(theirs.status).toBe(422);
    expect(theirs.body).toMatchObject({ success: false, error: "tool_failed" });
    expect(theirs.body.message).toContain("not found");
    expect(JSON.stringify(theirs.body)).not.toContain("1234");
    const missing = await tools(alice, "get_note_content", { noteId: 999_999 });
    expect(missing.status).toBe(422);
    expect(missing.body.message).toBe(theirs.body.message.replace(String(bobNote), "999999"));
    const usage = (await ok<Json>(t, alice.apiKey, "GET", "/tools")).usage;
    expect(usage.byTool.find((row: Json) => row.tool === "notes.get_note_content").failures).toBe(2);
  });

  it("validates namespace changes", async () => {
    const view = await ok<Json>(t, alice.apiKey, "GET", "/tools/namespaces");
    expect(view.namespaces).toContainEqual({ namespace: "notes", sources: ["native"], toolCount: 8, enabled: true });
    expect(view.summary).toEqual({ total: view.namespaces.length, enabled: view.namespaces.length, disabled: 0 });

    for (const body of [{}, { enable: [] }, { enable: [], disable: [] }, { enable: ["todos"], disable: ["todos"] }, { disable: "todos" }]) {
      expect((await call(t, alice.apiKey, "PUT", "/tools/namespaces", body)).status, JSON.stringify(body)).toBe(400);
    }
    const unknown = await call<Json>(t, alice.apiKey, "PUT", "/tools/namespaces", { disable: ["todos", "rockets"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: "unknown_namespace" });
    expect(unknown.body.message).toContain("rockets");
    // Nothing changed.
    expect((await ok<Json>(t, alice.apiKey, "GET", "/tools/namespaces")).summary.disabled).toBe(0);
  });

  it("a disabled namespace vanishes from GET /tools, is refused by POST /tools and by the agent, for its owner only", async () => {
    const put = await ok<Json>(t, alice.apiKey, "PUT", "/tools/namespaces", { disable: ["todos"] });
    expect(put.namespaces.find((n: Json) => n.namespace === "todos").enabled).toBe(false);
    expect(put.summary).toMatchObject({ disabled: 1, enabled: put.summary.total - 1 });
    // Disabling twice is the same as once.
    expect((await ok<Json>(t, alice.apiKey, "PUT", "/tools/namespaces", { disable: ["todos"] })).summary.disabled).toBe(1);

    const names = (await ok<Json>(t, alice.apiKey, "GET", "/tools")).tools.map((tool: Json) => tool.name);
    expect(names).not.toContain("list_todos");
    expect(names).toContain("search_notes");
    const refused = await tools(alice, "todos.list_todos", {});
    expect(refused.status).toBe(404);
    expect(refused.body.message).toContain("disabled");
    expect((await tools(alice, "create_todo", { title: "should not exist" })).status).toBe(404);
    // Bob's namespaces are his own.
    expect((await tools(bob, "list_todos", {})).status).toBe(200);

    fake.enqueue({ text: "ok" });
    const before = fake.requests.length;
    expect((await chatJson(t, alice.apiKey, { message: "hello" })).status).toBe(200);
    const offered = ((fake.requests[before]?.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(offered).toContain("search_notes");
    expect(offered).not.toContain("list_todos");
    expect(offered).not.toContain("create_todo");

    // The heartbeat runs through the same runner: an ACTIONS pass is not offered the todos either.
    const beat = fake.requests.length;
    await ok(t, alice.apiKey, "POST", "/heartbeat/run", { tier: "ACTIONS", dryRun: true });
    const beatOffered = ((fake.requests[beat]?.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(beatOffered).toContain("search_notes");
    expect(beatOffered).not.toContain("create_todo");

    const back = await ok<Json>(t, alice.apiKey, "PUT", "/tools/namespaces", { enable: ["todos"] });
    expect(back.summary.disabled).toBe(0);
    expect((await tools(alice, "list_todos", {})).status).toBe(200);
    fake.enqueue({ text: "ok" });
    const after = fake.requests.length;
    await chatJson(t, alice.apiKey, { message: "hello again" });
    expect(((fake.requests[after]?.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name)).toContain(
      "list_todos",
    );
  });

  it("lists no integrations yet and answers 404 for removing one", async () => {
    expect(await ok<Json>(t, alice.apiKey, "GET", "/tools/integrations")).toEqual({ success: true, integrations: [] });
    const removed = await call<Json>(t, alice.apiKey, "DELETE", "/tools/integrations/int_1");
    expect(removed.status).toBe(404);
  });

  it("needs a user key", async () => {
    expect((await call(t, null, "GET", "/tools")).status).toBe(401);
    expect((await call(t, null, "POST", "/tools", { tool: "search_notes", params: { query: "x" } })).status).toBe(401);
  });
});
