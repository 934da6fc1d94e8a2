import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ALL_SCOPES } from "@tandem/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, revokeApiKey } from "../src/auth/api-keys";
import { ServerConfigSchema } from "../src/config";
import { RESOURCE_SCOPES } from "../src/oauth/oauth-scopes";
import { startServer } from "../src/server";
import { ok, SQLITE_ONLY } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

// biome-ignore lint/suspicious/noExplicitAny: answers are checked by shape below
type Json = any;

const ACCEPT = "application/json, text/event-stream";
const MODERN = "2026-07-28";

interface ModernOptions {
  /** Another instance's origin; this test's server by default. */
  base?: string;
  apiKey?: string;
  /** Headers over (or, when undefined, instead of) the ones a modern client mirrors from the body. */
  headers?: Record<string, string | undefined>;
  /** Keys over (or, when undefined, instead of) the per-request envelope. */
  meta?: Record<string, unknown>;
  /** No id: a notification. */
  notification?: boolean;
}

/**
 * A raw 2026-07-28 request as a modern client sends it: no initialize, no session, the protocol
 * version and capabilities in `params._meta`, mirrored in MCP-Protocol-Version, Mcp-Method and Mcp-Name.
 */
function modernRequest(base: string, apiKey: string, method: string, params: Record<string, unknown> = {}, options: ModernOptions = {}) {
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "raw-modern-client", version: "1" },
    ...options.meta,
  };
  const body = { jsonrpc: "2.0", ...(options.notification ? {} : { id: 1 }), method, params: { ...params, _meta: meta } };
  const headers: Record<string, string | undefined> = {
    "content-type": "application/json",
    accept: ACCEPT,
    authorization: `Bearer ${apiKey}`,
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
    ...options.headers,
  };
  const sent = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return fetch(`${base}/mcp`, { method: "POST", headers: sent, body: JSON.stringify(body) });
}

describe.each(SQLITE_ONLY)("Tandem as an MCP server (%s)", (storage) => {
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

  const modern = (method: string, params: Record<string, unknown> = {}, options: ModernOptions = {}) =>
    modernRequest(options.base ?? t.server.url, options.apiKey ?? alice.apiKey, method, params, options);

  it("speaks 2026-07-28 without initialize or session: server/discover, tools/list and tools/call", async () => {
    const discover = await modern("server/discover");
    expect(discover.status).toBe(200);
    expect(discover.headers.get("content-type")).toMatch(/^application\/json/);
    expect(discover.headers.get("mcp-session-id")).toBeNull();
    expect(await discover.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        resultType: "complete",
        supportedVersions: [MODERN],
        capabilities: { tools: {} },
        instructions: expect.stringContaining("agent_chat"),
        ttlMs: expect.any(Number),
        cacheScope: "public",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "tandem", title: "Tandem", version: "1" } },
      },
    });

    // The same list a 2025-11-25 client gets through the SDK, with the fields 2026-07-28 adds.
    const listed = await modern("tools/list");
    expect(listed.status).toBe(200);
    expect(listed.headers.get("mcp-session-id")).toBeNull();
    const { result: list } = (await listed.json()) as Json;
    expect(list).toMatchObject({
      resultType: "complete",
      ttlMs: 0,
      cacheScope: "private",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "tandem" } },
    });
    const legacyNames = await names(await connect(alice.apiKey));
    expect(list.tools.map((tool: Json) => tool.name)).toEqual(legacyNames);

    const created = await modern("tools/call", {
      name: "create_note",
      arguments: { title: "Okapi notes", content: "The okapi is a forest giraffe." },
    });
    expect(created.status).toBe(200);
    const { result: note } = (await created.json()) as Json;
    expect(note).toMatchObject({ resultType: "complete", structuredContent: { note: { title: "Okapi notes" } } });
    expect(note.isError).toBeFalsy();
    // A name outside plain ASCII travels base64-encoded in Mcp-Name; this one is encoded for the test's sake.
    const encoded = `=?base64?${Buffer.from("search_notes").toString("base64")}?=`;
    const found = await modern("tools/call", { name: "search_notes", arguments: { query: "okapi" } }, { headers: { "mcp-name": encoded } });
    expect(((await found.json()) as Json).result.structuredContent.results.map((hit: Json) => hit.title)).toEqual(["Okapi notes"]);
    // A tool the caller may not call is the protocol's invalid-params error, in-band, as for legacy clients.
    const reader = await createApiKey(t.server.context.db, { userId: alice.userId, scopes: ["os.notes:read"] });
    const refused = await modern("tools/call", { name: "create_note", arguments: { title: "x", content: "y" } }, { apiKey: reader.apiKey });
    expect(refused.status).toBe(200);
    expect(await refused.json()).toMatchObject({ id: 1, error: { code: -32602, message: expect.stringMatching(/os\.notes:write/) } });
    // A notification is taken and dropped: the core revision defines none over HTTP.
    const notification = await modern("notifications/cancelled", { requestId: 1 }, { notification: true });
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe("");
    // subscriptions/listen: acknowledged with nothing honoured (the server pushes no change) and ended at
    // once, so no stream stays open on this instance (text() resolves only because the stream ends).
    const listen = await modern("subscriptions/listen", { notifications: { toolsListChanged: true } });
    expect(listen.status).toBe(200);
    const frames = await listen.text();
    expect(frames).toContain('"method":"notifications/subscriptions/acknowledged","params":{"notifications":{}');
    expect(frames).toContain('"resultType":"complete"');
  });

  it("refuses malformed 2026-07-28 requests with the revision's errors and runs nothing", async () => {
    const create = { name: "create_note", arguments: { title: "Never created", content: "x" } };
    const cases: [string, () => Promise<Response>, number, number][] = [
      [
        "no clientCapabilities",
        () => modern("tools/list", {}, { meta: { "io.modelcontextprotocol/clientCapabilities": undefined } }),
        400,
        -32602,
      ],
      [
        "clientInfo without a version",
        () => modern("tools/list", {}, { meta: { "io.modelcontextprotocol/clientInfo": { name: "x" } } }),
        400,
        -32602,
      ],
      [
        "a version header without the envelope",
        () => post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { "mcp-protocol-version": MODERN }),
        400,
        -32602,
      ],
      [
        "initialize under a modern header",
        () => post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }), { "mcp-protocol-version": MODERN }),
        400,
        -32020,
      ],
      [
        "headers that disagree on the version",
        () => modern("tools/call", create, { headers: { "mcp-protocol-version": "2025-11-25" } }),
        400,
        -32020,
      ],
      ["no MCP-Protocol-Version", () => modern("tools/call", create, { headers: { "mcp-protocol-version": undefined } }), 400, -32020],
      ["no Mcp-Method", () => modern("tools/call", create, { headers: { "mcp-method": undefined } }), 400, -32020],
      ["Mcp-Method naming another method", () => modern("tools/call", create, { headers: { "mcp-method": "tools/list" } }), 400, -32020],
      ["no Mcp-Name on tools/call", () => modern("tools/call", create, { headers: { "mcp-name": undefined } }), 400, -32020],
      ["Mcp-Name naming another tool", () => modern("tools/call", create, { headers: { "mcp-name": "search_notes" } }), 400, -32020],
      [
        "Mcp-Name with broken base64",
        () => modern("tools/call", create, { headers: { "mcp-name": "=?base64?not base64!?=" } }),
        400,
        -32020,
      ],
      ["ping, gone in 2026-07-28", () => modern("ping"), 404, -32601],
      [
        "initialize, gone in 2026-07-28",
        () => modern("initialize", { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: "x", version: "1" } }),
        404,
        -32601,
      ],
      ["a method this server does not serve", () => modern("resources/list"), 404, -32601],
      [
        "a batch holding a modern request",
        () =>
          post(
            JSON.stringify([
              { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } } },
            ]),
          ),
        400,
        -32600,
      ],
      [
        "a body that is no JSON-RPC",
        () =>
          post(
            JSON.stringify({
              jsonrpc: "1.0",
              id: 1,
              method: "tools/list",
              params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } },
            }),
          ),
        400,
        -32600,
      ],
      ["the wrong Content-Type", () => modern("tools/call", create, { headers: { "content-type": "text/plain" } }), 415, -32000],
    ];
    for (const [what, send, status, code] of cases) {
      const response = await send();
      expect(response.status, what).toBe(status);
      expect(await response.json(), what).toMatchObject({ jsonrpc: "2.0", error: { code } });
    }
    // Unlike its 2025 transport (406), the SDK's 2026-07-28 path serves a client that accepts only JSON: it answers in JSON.
    const jsonOnly = await modern("tools/list", {}, { headers: { accept: "application/json" } });
    expect(jsonOnly.status).toBe(200);
    expect(jsonOnly.headers.get("content-type")).toMatch(/^application\/json/);
    // An unknown revision: the error names the ones served, so the client can pick one.
    const future = await modern(
      "tools/list",
      {},
      { meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01" }, headers: { "mcp-protocol-version": "2099-01-01" } },
    );
    expect(future.status).toBe(400);
    expect(await future.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32022,
        message: expect.stringMatching(/^Unsupported protocol version/),
        data: { supported: [MODERN], requested: "2099-01-01" },
      },
    });
    expect((await alice.client.call("listNotes", {})).notes.map((note: Json) => note.title)).not.toContain("Never created");
  });

  it("answers any request on any instance: a second server on the same storage, no session, both revisions", async () => {
    const other = await startServer(
      ServerConfigSchema.parse({ port: 0, dataDir: t.dataDir, databaseUrl: t.databaseUrl, logLevel: "silent", maintenanceIntervalMs: 0 }),
    );
    try {
      // 2025-11-25 through the SDK's client, each request sent to the other instance than the one before.
      const bases = [t.server.url, other.url];
      const served: string[] = [];
      let turn = 0;
      const roundRobin: typeof fetch = async (input, init) => {
        const url = new URL(input instanceof Request ? input.url : input.toString());
        const base = bases[turn++ % bases.length] as string;
        served.push(base);
        const response = await fetch(`${base}${url.pathname}`, init);
        expect(response.headers.get("mcp-session-id")).toBeNull();
        return response;
      };
      const client = new Client({ name: "round-robin", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${t.server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${alice.apiKey}` } },
          fetch: roundRobin,
        }),
      );
      clients.push(client);
      expect(await names(client)).toContain("create_note");
      const created: Json = await client.callTool({ name: "create_note", arguments: { title: "Tapir plan", content: "The tapir swims." } });
      expect(created.isError).toBeFalsy();
      const found: Json = await client.callTool({ name: "search_notes", arguments: { query: "tapir" } });
      expect(found.structuredContent.results.map((hit: Json) => hit.title)).toEqual(["Tapir plan"]);
      expect(new Set(served)).toEqual(new Set(bases));

      // 2026-07-28: written through one instance, read through the other.
      const written = await modern(
        "tools/call",
        { name: "create_note", arguments: { title: "Capybara plan", content: "The capybara naps." } },
        { base: other.url },
      );
      expect(((await written.json()) as Json).result.structuredContent.note.title).toBe("Capybara plan");
      const read = await modern("tools/call", { name: "search_notes", arguments: { query: "capybara" } });
      expect(((await read.json()) as Json).result.structuredContent.results.map((hit: Json) => hit.title)).toEqual(["Capybara plan"]);
    } finally {
      await other.close();
    }
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
