import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer, type TestUser } from "./harness";

const json = { "content-type": "application/json" };

describe("v1 API through real HTTP", () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
  });
  afterAll(() => t.stop());

  const auth = (user: TestUser) => ({ authorization: `Bearer ${user.apiKey}` });

  it("answers /healthz without a credential", async () => {
    const response = await t.fetch("/healthz");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, status: "ok" });
  });

  it("initialises idempotently: /init twice leaves exactly one General", async () => {
    const first = await alice.client.call("init", { body: {} });
    const second = await alice.client.call("init");
    expect(first).toMatchObject({ success: true, initialized: true, created: true });
    expect(second).toMatchObject({ success: true, initialized: true, created: false });
    expect(second.sync).toEqual({ url: t.server.syncUrl, workspaceDoc: `workspace:${alice.userId}`, todosDoc: `todos:${alice.userId}` });
    const { folders } = await alice.client.call("listFolders");
    expect(folders.filter((f) => f.name === "General")).toHaveLength(1);
    expect(folders[0]).toMatchObject({ name: "General", parentId: null, icon: null, fileCount: 0, shared: false, role: "owner" });
  });

  it("creates General once when many /init calls race", async () => {
    const eve = await t.addUser("eve");
    const results = await Promise.all(Array.from({ length: 8 }, () => eve.client.call("init")));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect((await eve.client.call("listFolders")).folders.map((f) => f.name)).toEqual(["General"]);
  });

  it("says who is calling", async () => {
    const identity = await alice.client.call("identity");
    expect(identity).toMatchObject({ success: true, userId: alice.userId, principalId: String(alice.userId), username: "alice" });
    expect(identity.credential.type).toBe("api_key");
    // Existing clients read the person from `profile` and `identity`.
    const person = { userId: alice.userId, username: "alice", name: identity.name, email: identity.email };
    expect(identity.profile).toEqual(person);
    expect(identity.identity).toEqual(person);
  });

  it("accepts X-API-Key as an alias of the bearer form", async () => {
    const response = await t.fetch("/api/v1/identity", { headers: { "x-api-key": alice.apiKey } });
    expect(response.status).toBe(200);
  });

  describe("401", () => {
    it.each([
      ["no credential", {}, "missing_credential"],
      ["a wrong key", { authorization: `Bearer svc_sk_${"A".repeat(44)}` }, "invalid_credential"],
      ["a malformed key", { authorization: "Bearer not-a-key" }, "invalid_credential"],
      ["another auth scheme", { authorization: "Basic YWxpY2U6cGFzcw==" }, "invalid_credential"],
      ["a wrong X-API-Key", { "x-api-key": "svc_sk_short" }, "invalid_credential"],
    ])("with %s", async (_, headers, code) => {
      const response = await t.fetch("/api/v1/os/folders", { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ success: false, error: code, message: expect.any(String) });
    });
  });

  it("answers 403 insufficient_scope to a key without the route's scope", async () => {
    const { stdout } = await t.cli(["keys", "create", "alice", "--scopes", "os.todos:read", "--label", "todos only"]);
    const { apiKey } = JSON.parse(stdout) as { apiKey: string };
    const response = await t.fetch("/api/v1/os/folders", { headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ success: false, error: "insufficient_scope" });
    // The same key still reaches routes that need no particular scope.
    expect((await t.fetch("/api/v1/identity", { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
  });

  it("hides alice's folders from bob: 404, never 403", async () => {
    const { folder } = await alice.client.call("createFolder", { body: { name: "Private" } });
    const list = await bob.client.raw("listFolders", { query: { parentId: folder.id } });
    expect(list.status).toBe(404);
    expect(list.body).toMatchObject({ success: false, error: "not_found" });
    const create = await bob.client.raw("createFolder", { body: { name: "Intruder", parentId: folder.id } });
    expect(create.status).toBe(404);
    const { folders } = await bob.client.call("listFolders");
    expect(folders.map((f) => f.id)).not.toContain(folder.id);
  });

  describe("folders", () => {
    it("creates by name (201), then answers 200 with mode existing", async () => {
      const created = await alice.client.raw("createFolder", { body: { name: "Research" } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ success: true, mode: "created", path: "Research", createdSegments: ["Research"] });
      const existing = await alice.client.raw("createFolder", { body: { name: "research" } });
      expect(existing.status).toBe(200);
      expect(existing.body).toMatchObject({ success: true, mode: "existing", path: "Research", createdSegments: [] });
    });

    it("creates nested paths and lists children", async () => {
      const result = await alice.client.call("createFolder", { body: { path: "Areas/Home/Garden" } });
      expect(result.createdSegments).toEqual(["Areas", "Home", "Garden"]);
      const areas = (await alice.client.call("listFolders", { query: { parentId: "root" } })).folders.find((f) => f.name === "Areas");
      expect(areas).toBeDefined();
      const children = await alice.client.call("listFolders", { query: { parentId: areas?.id } });
      expect(children.folders.map((f) => f.name)).toEqual(["Home"]);
    });

    it("accepts a path 50 folders deep and refuses 65", async () => {
      const deep = Array.from({ length: 50 }, (_, i) => `d${i}`).join("/");
      expect((await alice.client.raw("createFolder", { body: { path: deep } })).status).toBe(201);
      const tooDeep = await alice.client.raw("createFolder", { body: { path: Array.from({ length: 65 }, (_, i) => `e${i}`).join("/") } });
      expect(tooDeep.status).toBe(400);
      expect(tooDeep.body).toMatchObject({ error: "invalid_request", message: expect.stringContaining("body.path") });
    });

    it.each([
      ["name and path together", { name: "a", path: "b" }, "body.name"],
      ["neither name nor path", {}, "body.name"],
      ["an empty name", { name: "   " }, "body.name"],
      ["a slash in a name", { name: "a/b" }, "body.name"],
      ["a control character", { name: "bad\u0007name" }, "body.name"],
      ["an empty path segment", { path: "a//b" }, "body.path"],
      ["a numeric name", { name: 42 }, "body.name"],
      ["a string parentId", { name: "x", parentId: "1" }, "body.parentId"],
      ["a negative parentId", { name: "x", parentId: -1 }, "body.parentId"],
    ])("refuses %s with a 400 naming the field", async (_, body, field) => {
      const response = await t.fetch("/api/v1/os/folders", {
        method: "POST",
        headers: { ...json, ...auth(alice) },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
      const error = (await response.json()) as { error: string; message: string };
      expect(error.error).toBe("invalid_request");
      expect(error.message).toContain(field);
    });

    it("keeps Unicode names intact", async () => {
      const result = await alice.client.call("createFolder", { body: { name: "Café ☕ 日本" } });
      expect(result.folder.name).toBe("Café ☕ 日本");
    });

    it("refuses a parentId that is not a number in the query", async () => {
      const response = await t.fetch("/api/v1/os/folders?parentId=abc", { headers: auth(alice) });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: "invalid_request", message: expect.stringContaining("query.parentId") });
    });
  });

  describe("bad input", () => {
    it("answers malformed JSON with a 400 JSON error", async () => {
      const response = await t.fetch("/api/v1/os/folders", { method: "POST", headers: { ...json, ...auth(alice) }, body: '{"name": "x"' });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(await response.json()).toMatchObject({ success: false, error: "invalid_json" });
    });

    it.each([
      ["null", "null"],
      ["an array", "[1,2]"],
      ["a string", '"folder"'],
    ])("refuses %s as a body", async (_, body) => {
      const response = await t.fetch("/api/v1/os/folders", { method: "POST", headers: { ...json, ...auth(alice) }, body });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ success: false });
    });

    it("answers a 2 MB body on a small route with 413", async () => {
      const body = JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) });
      const response = await t.fetch("/api/v1/os/folders", { method: "POST", headers: { ...json, ...auth(alice) }, body });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ success: false, error: "payload_too_large" });
    });

    it("parses JSON sent with curl's default form content type", async () => {
      const response = await t.fetch("/api/v1/os/folders", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...auth(alice) },
        body: JSON.stringify({ name: "From curl" }),
      });
      expect(response.status).toBe(201);
    });

    it("answers unknown routes with a JSON 404", async () => {
      const response = await t.fetch("/api/v1/no/such/route", { headers: auth(alice) });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ success: false, error: "route_not_found" });
    });

    it("answers an unknown charset with 415, not 500", async () => {
      const response = await t.fetch("/api/v1/os/folders", {
        method: "POST",
        headers: { "content-type": "application/json; charset=klingon", ...auth(alice) },
        body: '{"name":"x"}',
      });
      expect(response.status).toBe(415);
    });

    it("survives invalid UTF-8 in a body", async () => {
      const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
      const response = await t.fetch("/api/v1/os/folders", { method: "POST", headers: { ...json, ...auth(alice) }, body: bytes });
      expect(response.status).toBeLessThan(500);
    });
  });

  it("lists every route in GET /os and the OpenAPI document", async () => {
    const discovery = await alice.client.call("discovery");
    const listed = Object.values(discovery.byCategory)
      .flat()
      .map((r) => `${r.method} ${r.path}`);
    const openapi = (await t.anonymous.call("openapi")) as { paths: Record<string, Record<string, unknown>> };
    // Paths that name their own server (A2A, at the root) are not v1 routes.
    const documented = Object.entries(openapi.paths)
      .filter(([, ops]) => !("servers" in ops))
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(discovery.totalEndpoints).toBe(listed.length);
    expect(documented.sort()).toEqual(listed.sort());
    for (const route of ["POST /init", "GET /os/folders", "POST /os/folders", "GET /identity", "GET /os/status", "GET /conversations"]) {
      expect(listed).toContain(route);
    }
  });

  it("renders the API reference page", async () => {
    const response = await t.fetch("/api/v1/reference");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const page = await response.text();
    expect(page).toContain("/os/folders");
    expect(page).toContain("os.notes:write");
  });

  it("answers status and conversations", async () => {
    const status = await alice.client.call("status");
    expect(status).toMatchObject({ success: true, contextCount: 0, lastSyncedAt: null });
    expect(status.folders.length).toBeGreaterThan(0);
    expect(await alice.client.call("listConversations")).toEqual({ success: true, conversations: [], total: 0, unreadTotal: 0 });
  });
});

describe("rate limit", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ rateLimitBurst: 5, rateLimitPerMinute: 60 });
  });
  afterAll(() => t.stop());

  it("answers a burst over the limit with 429 and Retry-After, per credential, and keeps serving", async () => {
    const carol = await t.addUser("carol");
    const dave = await t.addUser("dave");
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const result = await carol.client.raw("identity");
      statuses.push(result.status);
      if (result.status === 429) {
        retryAfter = result.headers.get("retry-after");
        expect(result.body).toMatchObject({ success: false, error: "rate_limited" });
      }
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Another credential has its own bucket; the server is still up.
    expect((await dave.client.raw("identity")).status).toBe(200);
    expect((await t.fetch("/healthz")).status).toBe(200);
  });
});
