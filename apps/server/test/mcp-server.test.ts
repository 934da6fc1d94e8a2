import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ALL_SCOPES } from "@tandem/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey } from "../src/auth/api-keys";
import { RESOURCE_SCOPES } from "../src/oauth/oauth-scopes";
import { ok, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

// biome-ignore lint/suspicious/noExplicitAny: answers are checked by shape below
type Json = any;

const ACCEPT = "application/json, text/event-stream";

describe.each(storages("MCP server"))("Tandem as an MCP server (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  const clients: Client[] = [];

  /** The SDK's own client over Streamable HTTP, with the key in the Authorization header. */
  async function connect(apiKey: string, headers: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: "mcp-server-test", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}`, ...headers } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  /** A raw JSON-RPC POST, for what no well-behaved client sends. */
  const post = (body: string, headers: Record<string, string> = {}) =>
    t.fetch("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT, authorization: `Bearer ${alice.apiKey}`, ...headers },
      body,
    });

  const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
  const textOf = (result: Json): string => result.content.map((part: Json) => part.text).join("");

  beforeAll(async () => {
    t = await startTestServer({}, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    await bob.client.call("init");
    await bob.client.call("createNote", { body: { title: "Bob's zebra", content: "Bob's own zebra facts." } });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(() => t.stop());

  it("lists the registry's tools with their JSON Schema, and creates, searches and lists through them", async () => {
    const client = await connect(alice.apiKey);
    expect(client.getServerVersion()).toMatchObject({ name: "tandem" });
    const { tools } = await client.listTools();
    const listed = tools.map((tool) => tool.name);
    expect(listed).toEqual(
      expect.arrayContaining(["search_notes", "create_note", "list_todos", "create_todo", "memory_search", "agent_chat"]),
    );
    const search = tools.find((tool) => tool.name === "search_notes");
    expect(search).toMatchObject({ annotations: { readOnlyHint: true }, inputSchema: { type: "object", required: ["query"] } });
    expect(tools.find((tool) => tool.name === "create_note")?.annotations?.readOnlyHint).toBe(false);
    // The same list as GET /tools, plus the agent.
    const v1 = await ok<Json>(t, alice.apiKey, "GET", "/tools");
    expect(listed.filter((name) => name !== "agent_chat").sort()).toEqual(v1.tools.map((tool: Json) => tool.name).sort());

    const created: Json = await client.callTool({
      name: "create_note",
      arguments: { title: "Zebra plan", content: "The zebra migrates in spring." },
    });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent.note).toMatchObject({ title: "Zebra plan" });
    expect(JSON.parse(textOf(created))).toEqual(created.structuredContent);

    const found: Json = await client.callTool({ name: "search_notes", arguments: { query: "zebra" } });
    expect(found.structuredContent.results.map((hit: Json) => hit.title)).toEqual(["Zebra plan"]);

    await client.callTool({ name: "todos.create_todo", arguments: { title: "Feed the zebra" } });
    const todos: Json = await client.callTool({ name: "list_todos", arguments: {} });
    expect(todos.structuredContent.todos.map((todo: Json) => todo.title)).toContain("Feed the zebra");

    // Counted with the calls of POST /tools.
    const usage = (await ok<Json>(t, alice.apiKey, "GET", "/tools")).usage.byTool.map((row: Json) => row.tool);
    expect(usage).toEqual(expect.arrayContaining(["notes.create_note", "notes.search_notes", "todos.list_todos"]));
  });

  it("runs the personal agent as agent_chat, under the caller's grant, and continues its conversation", async () => {
    await alice.client.call("createNote", { body: { title: "Project Atlas", content: "The Atlas launch is planned for March 3." } });
    const client = await connect(alice.apiKey);
    const answer: Json = await client.callTool({ name: "agent_chat", arguments: { message: "When is the Atlas launch?" } });
    expect(answer.isError).toBeFalsy();
    expect(textOf(answer)).toContain("March 3");
    expect(answer.structuredContent).toMatchObject({ toolsUsed: ["search_notes", "get_note_content"], conversationId: expect.any(Number) });
    const { conversationId } = answer.structuredContent;
    const again: Json = await client.callTool({ name: "agent_chat", arguments: { message: "hello", conversationId } });
    expect(again.structuredContent.conversationId).toBe(conversationId);
    const stored = await ok<Json>(t, alice.apiKey, "GET", `/conversations/${conversationId}`);
    expect(stored.conversation.messages).toHaveLength(4);

    // Another owner's conversation is not found, told as the tool's error.
    const other: Json = await (await connect(bob.apiKey)).callTool({ name: "agent_chat", arguments: { message: "hi", conversationId } });
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/not found/);

    // A key that may only read gets an agent that cannot write.
    const reader = await t.addUser(`chat-reader-${storage}`, ["os.notes:read", "os.todos:read"]);
    const readOnly: Json = await (await connect(reader.apiKey)).callTool({
      name: "agent_chat",
      arguments: { message: "Add a todo: buy a bike" },
    });
    expect(textOf(readOnly)).toMatch(/can't add todos/);
    expect((await reader.client.call("listTodos", {})).result.todos).toEqual([]);
  });

  it("shows a read-only key no write tool and refuses it one by name", async () => {
    const reader = await createApiKey(t.server.context.db, { userId: alice.userId, scopes: ["os.notes:read"] });
    const client = await connect(reader.apiKey);
    const listed = await names(client);
    expect(listed).toEqual(expect.arrayContaining(["search_notes", "get_note_content", "agent_chat"]));
    expect(listed).not.toContain("create_note");
    expect(listed).not.toContain("list_todos");
    await expect(client.callTool({ name: "create_note", arguments: { title: "x", content: "y" } })).rejects.toThrow(/os\.notes:write/);
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(/no tool is named/);
    await expect(client.callTool({ name: "x".repeat(100_000), arguments: {} })).rejects.toThrow(/no tool has a name that long/);
    expect((await alice.client.call("listNotes", {})).notes.map((note: Json) => note.title)).not.toContain("x");
  });

  it("drops a disabled namespace at once, also for a client already connected, and brings it back", async () => {
    const client = await connect(alice.apiKey);
    expect(await names(client)).toContain("list_todos");
    await ok(t, alice.apiKey, "PUT", "/tools/namespaces", { disable: ["todos"] });
    try {
      const listed = await names(client);
      expect(listed.some((name) => ["list_todos", "create_todo", "complete_todo"].includes(name))).toBe(false);
      expect(listed).toContain("search_notes");
      await expect(client.callTool({ name: "list_todos", arguments: {} })).rejects.toThrow(/disabled/);
    } finally {
      await ok(t, alice.apiKey, "PUT", "/tools/namespaces", { enable: ["todos"] });
    }
    expect((await client.callTool({ name: "list_todos", arguments: {} })).isError).toBeFalsy();
  });

  it("refuses a revoked key at its next request, on a client already connected", async () => {
    const key = await createApiKey(t.server.context.db, { userId: alice.userId, scopes: [...ALL_SCOPES] });
    const client = await connect(key.apiKey);
    expect(await names(client)).toContain("search_notes");
    await revokeApiKey(t.server.context.db, key.keyId);
    await expect(client.listTools()).rejects.toThrow();
    const raw = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { authorization: `Bearer ${key.apiKey}` });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
  });

  it("answers no credential with a 401 that names the resource metadata, which points at the sign-in", async () => {
    const response = await t.fetch("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(401);
    const metadataUrl = `${t.server.url}/.well-known/oauth-protected-resource/mcp`;
    expect(response.headers.get("www-authenticate")).toBe(`Bearer realm="tandem", resource_metadata="${metadataUrl}"`);
    expect(await response.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { data: { error: "missing_credential" } } });

    const metadata = await fetch(metadataUrl);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toEqual({
      resource: `${t.server.url}/mcp`,
      authorization_servers: [t.server.url],
      scopes_supported: [...RESOURCE_SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "Tandem",
    });
    // The SDK's client finds the same metadata from the challenge.
    const client = new Client({ name: "anonymous", version: "1" });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`)))).rejects.toThrow();
  });

  it("answers garbage with a 4xx, never a 500", async () => {
    const cases: [string, Record<string, string>?][] = [
      ["{not json"],
      ["null"],
      ["42"],
      ['{"jsonrpc":"2.0"}'],
      ['{"jsonrpc":"1.0","id":1,"method":"tools/list"}'],
      ["[]"],
      [JSON.stringify(Array.from({ length: 5 }, (_, id) => ({ jsonrpc: "2.0", id, method: "tools/list" })))],
      [`${"[".repeat(5000)}${"]".repeat(5000)}`],
      [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { accept: "application/json" }],
      [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { "content-type": "text/plain" }],
      [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { authorization: "Bearer" }],
      [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(1_100_000) } })],
    ];
    for (const [body, headers] of cases) {
      const response = await post(body, headers);
      expect(response.status, body.slice(0, 60)).toBeGreaterThanOrEqual(400);
      expect(response.status, body.slice(0, 60)).toBeLessThan(500);
      expect(await response.json()).toMatchObject({ jsonrpc: "2.0" });
    }
    // A well-formed call to a method that does not exist is a JSON-RPC error, not an HTTP one.
    const unknown = await post(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "no/such" }), { "mcp-protocol-version": "2025-06-18" });
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ id: 7, error: { code: -32601 } });
    // A small batch is still answered.
    const batch = await post(
      JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        { jsonrpc: "2.0", id: 2, method: "ping" },
      ]),
      { "mcp-protocol-version": "2025-03-26" },
    );
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as Json[]).map((reply) => reply.id).sort()).toEqual([1, 2]);
    // GET (no stream to resume) and DELETE (no session) are refused as the spec allows.
    for (const method of ["GET", "DELETE"]) {
      const response = await t.fetch("/mcp", { method, headers: { accept: "text/event-stream", authorization: `Bearer ${alice.apiKey}` } });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
    }
  });

  it("tells a tool's own failure and bad arguments as isError content, and hides another owner's note", async () => {
    const client = await connect(alice.apiKey);
    const missing: Json = await client.callTool({ name: "get_note_content", arguments: { noteId: 999_999 } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/not found/);

    const bobNote = (await bob.client.call("listNotes", {})).notes[0]?.id;
    const foreign: Json = await client.callTool({ name: "get_note_content", arguments: { noteId: bobNote } });
    expect(foreign.isError).toBe(true);
    const absent: Json = await client.callTool({ name: "get_note_content", arguments: { noteId: 888_888 } });
    expect(textOf(foreign).replace(String(bobNote), "N")).toBe(textOf(absent).replace("888888", "N"));
    const search: Json = await client.callTool({ name: "search_notes", arguments: { query: "zebra" } });
    expect(JSON.stringify(search.structuredContent)).not.toContain("Bob");

    const invalid: Json = await client.callTool({ name: "search_notes", arguments: { query: 42 } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/invalid arguments for search_notes: query/);
    const badChat: Json = await client.callTool({ name: "agent_chat", arguments: { message: "" } });
    expect(badChat.isError).toBe(true);
  });

  it("takes the caller's time zone from X-Tandem-Timezone for tools that speak of today", async () => {
    const dateIn = (timeZone: string) => new Intl.DateTimeFormat("en-CA", { timeZone }).format(new Date());
    // One of the two is always on another date than UTC.
    const zone = dateIn("Pacific/Kiritimati") !== dateIn("UTC") ? "Pacific/Kiritimati" : "Pacific/Pago_Pago";
    await ok(t, alice.apiKey, "POST", "/os/todos", { title: "Due today over there", dueDate: dateIn(zone) });
    const today = async (headers: Record<string, string>) => {
      const result: Json = await (await connect(alice.apiKey, headers)).callTool({ name: "list_todos", arguments: { when: "today" } });
      return result.structuredContent.todos.map((row: Json) => row.title);
    };
    expect(await today({ "x-tandem-timezone": zone })).toContain("Due today over there");
    expect(await today({})).not.toContain("Due today over there");
    expect(await today({ "x-tandem-timezone": "Not/AZone" })).not.toContain("Due today over there");
  });
});

describe("the MCP server's rate limit", () => {
  let t: TestServer;
  afterAll(() => t.stop());

  it("is the v1 limit per credential: a 429 with Retry-After once the burst is spent", async () => {
    t = await startTestServer({ rateLimitPerMinute: 1, rateLimitBurst: 3 });
    const alice = await t.addUser("alice");
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 4; i++) {
      const response = await t.fetch("/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: ACCEPT, authorization: `Bearer ${alice.apiKey}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/list" }),
      });
      statuses.push(response.status);
      retryAfter = response.headers.get("retry-after");
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});
