import { Writable } from "node:stream";
import { gzipSync } from "node:zlib";
import { routes, workspaceDocName } from "@tandem/core";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findTool } from "../src/agent/tools/registry";
import type { RunCaller } from "../src/agent/tools/run-grant";
import { executeTool } from "../src/agent/tools/to-ai-tools";
import { createApiKey } from "../src/auth/api-keys";
import { ServerConfigSchema } from "../src/config";
import { startServer } from "../src/server";
import { registerBridge, storages } from "./delegation-fixture";
import { createPostgresSchema, POSTGRES_URL, startTestServer, type TestServer, type TestUser } from "./harness";

/** `{"a":[[[…]]]}`: JSON nested `depth` levels, small enough for any route's body limit. */
const deepJson = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("HTTP hardening", () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    // The route-table sweep sends thousands of requests with one key: the per-key rate limit is not under test here.
    t = await startTestServer({ rateLimitBurst: 1_000_000, rateLimitPerMinute: 1_000_000 });
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    await bob.client.call("init");
  });
  afterAll(() => t.stop());

  const post = (user: TestUser | null, path: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
    t.fetch(`/api/v1${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(user ? { authorization: `Bearer ${user.apiKey}` } : {}), ...headers },
      body,
    });

  describe("client input that used to be a 500", () => {
    it("answers a body that is not the gzip its Content-Encoding says with 400", async () => {
      const response = await post(alice, "/os/notes", "this is not gzip", { "content-encoding": "gzip" });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ success: false, error: "invalid_content_encoding" });
      // A real gzip body still works.
      const gzipped = await post(alice, "/os/notes", gzipSync(JSON.stringify({ title: "Zipped", content: "hi" })), {
        "content-encoding": "gzip",
      });
      expect(gzipped.status).toBe(201);
    });

    it("says one reason per bad field, not every check it failed", async () => {
      const get = (path: string) => t.fetch(`/api/v1${path}`, { headers: { authorization: `Bearer ${alice.apiKey}` } });
      const reason = async (id: string) => {
        const response = await get(`/os/notes/${id}`);
        const body = (await response.json()) as { success: boolean; error: string; message: string };
        expect([response.status, body.success, body.error], id).toEqual([400, false, "invalid_request"]);
        return body.message;
      };
      // Both too large and not whole: one reason is enough.
      expect(await reason("99999999999999999999.5")).toBe("params.id: is too large");
      expect(await reason("99999999999999999999")).toBe("params.id: is too large");
      expect(await reason("1.5")).toBe("params.id: must be a whole number");
      expect(await reason("-2.5")).toBe("params.id: must be a positive id");
      expect(await reason("abc")).toBe("params.id: must be a number");
    });

    it("answers deeply nested JSON with 400 on every route, the unauthenticated ones too", async () => {
      const device = (
        await post(
          alice,
          "/local-agent/device-code/start",
          JSON.stringify({ deviceId: "dev-1", runtime: "claude-code", capabilities: { tools: "x" } }),
        )
      ).status;
      expect(device).toBe(200);
      const deep = deepJson(20_000);
      const cases: [TestUser | null, string, string][] = [
        [null, "/local-agent/device-code/start", `{"deviceId":"d","runtime":"claude-code","capabilities":{"a":${deep}}}`],
        [alice, "/local-agent/messages", `{"communicationSessionId":"c","payload":${deep}}`],
        [alice, "/local-agent/endpoints", `{"deviceId":"d","runtime":"claude-code","capabilities":{"a":${deep}}}`],
        [alice, "/local-agent/sessions", `{"capabilities":{"a":${deep}}}`],
        [alice, "/local-agent/delegations", `{"target":"bob","task":"t","context":{"a":${deep}}}`],
        [alice, "/os/notes", `{"title":"t","content":"c","tags":${deep}}`],
      ];
      for (const [user, path, body] of cases) {
        const response = await post(user, path, body);
        expect(response.status, path).toBeGreaterThanOrEqual(400);
        expect(response.status, path).toBeLessThan(500);
      }
      const response = await post(null, "/local-agent/device-code/start", cases[0]?.[2] as string);
      expect(await response.json()).toMatchObject({ success: false, error: "json_too_deep" });
    });

    it("answers every route that reads a body with 4xx for hostile bodies (route-table sweep)", async () => {
      const bridge = await registerBridge(t, bob, "sweep-device");
      const hostile: [string, string | Uint8Array, Record<string, string>][] = [
        ["bad gzip", "not gzip at all", { "content-encoding": "gzip" }],
        ["bad deflate", new Uint8Array([1, 2, 3, 4]), { "content-encoding": "deflate" }],
        ["bad brotli", "not brotli", { "content-encoding": "br" }],
        ["unknown encoding", "{}", { "content-encoding": "x-nonsense" }],
        ["deep array", deepJson(20_000), {}],
        ["deep in an object", `{"a":${deepJson(20_000)}}`, {}],
        ["deep, gzipped", gzipSync(`{"capabilities":{"a":${deepJson(20_000)}}}`), { "content-encoding": "gzip" }],
        ["UTF-32", "{}", { "content-type": "application/json; charset=utf-32" }],
        ["truncated JSON", '{"title":"x', {}],
      ];
      const bodied = Object.values(routes).filter((route) => route.method !== "GET" && (route.method !== "DELETE" || "body" in route));
      expect(bodied.length).toBeGreaterThan(20);
      for (const route of bodied) {
        const path = route.path.replace(/:[A-Za-z]+/g, "1");
        const token = route.auth === "device" ? bridge.deviceToken : route.auth === "public" ? undefined : alice.apiKey;
        for (const [what, body, headers] of hostile) {
          const response = await t.fetch(`/api/v1${path}`, {
            method: route.method,
            headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
            body,
          });
          expect(response.status, `${route.method} ${route.path}: ${what}`).toBeGreaterThanOrEqual(400);
          expect(response.status, `${route.method} ${route.path}: ${what}`).toBeLessThan(500);
          expect(await response.json()).toMatchObject({ success: false });
        }
      }
    }, 120_000);

    it("still takes JSON nested as deep as real clients send", async () => {
      const response = await post(
        alice,
        "/local-agent/device-code/start",
        JSON.stringify({ deviceId: "dev-2", runtime: "claude-code", capabilities: { a: JSON.parse(deepJson(50)) } }),
      );
      expect(response.status).toBe(200);
    });
  });

  describe("grep answers are bounded", () => {
    it("cuts long lines, stops at the answer budget, and says so", async () => {
      // One line of 1 MB, and notes of 1,000 matching lines of 1,000 characters with 100 lines of context.
      const hugeLine = `${"x".repeat(500_000)}needle${"y".repeat(500_000)}`;
      await alice.client.call("createNote", { body: { title: "One line", content: hugeLine, format: "text" } });
      const manyLines = Array.from({ length: 1000 }, (_, i) => `${i} needle ${"z".repeat(990)}`).join("\n");
      for (let i = 0; i < 4; i++)
        await alice.client.call("createNote", { body: { title: `Lines ${i}`, content: manyLines, format: "text" } });

      const response = await post(alice, "/os/notes/grep", JSON.stringify({ pattern: "needle", contextBefore: 100, contextAfter: 100 }));
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text.length).toBeLessThan(8 * 1024 * 1024);
      const answer = JSON.parse(text) as {
        results: { title: string; matches: { text: string; match: string; before: string[]; after: string[] }[] }[];
        summary: { truncated: boolean; truncatedBy: string[] };
      };
      expect(answer.summary.truncated).toBe(true);
      expect(answer.summary.truncatedBy).toEqual(expect.arrayContaining(["lineLength", "answerSize"]));
      const oneLine = answer.results.find((r) => r.title === "One line");
      expect(oneLine?.matches[0]?.text.length).toBeLessThanOrEqual(1000);
      expect(oneLine?.matches[0]?.text).toContain("needle");
      expect(oneLine?.matches[0]?.match).toBe("needle");

      // The same through the regex worker.
      const regex = await post(
        alice,
        "/os/notes/grep",
        JSON.stringify({ pattern: "need+le", mode: "regex", contextBefore: 100, contextAfter: 100 }),
      );
      expect(regex.status).toBe(200);
      const regexText = await regex.text();
      expect(regexText.length).toBeLessThan(8 * 1024 * 1024);
      expect(JSON.parse(regexText).summary).toMatchObject({ truncated: true });
    });

    it("answers a small grep in full, with truncatedBy empty", async () => {
      await bob.client.call("createNote", { body: { title: "Small", content: "alpha\nbeta\ngamma", format: "text" } });
      const found = await bob.client.call("grepNotes", { body: { pattern: "beta", contextBefore: 1, contextAfter: 1 } });
      expect(found.results[0]?.matches[0]).toMatchObject({ text: "beta", before: ["alpha"], after: ["gamma"] });
      expect(found.summary).toMatchObject({ truncated: false, truncatedBy: [] });
    });
  });

  describe("regex grep is fair between users", () => {
    it("serves another caller's grep while one user's catastrophic patterns run, and caps one user's queue", async () => {
      const carol = await t.addUser("carol");
      const dave = await t.addUser("dave");
      await carol.client.call("createNote", { body: { title: "Bomb", content: `${"a".repeat(40)}!`, format: "text" } });
      await dave.client.call("createNote", { body: { title: "Plain", content: "hello world", format: "text" } });

      const finished: string[] = [];
      const bombs = Array.from({ length: 6 }, (_, i) =>
        post(carol, "/os/notes/grep", JSON.stringify({ pattern: "^(a+)+$", mode: "regex" })).then(async (response) => {
          finished.push(`carol ${i}`);
          return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() };
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const plain = await post(dave, "/os/notes/grep", JSON.stringify({ pattern: "hel+o", mode: "regex" }));
      finished.push("dave");
      expect(plain.status).toBe(200);
      expect(((await plain.json()) as { results: unknown[] }).results).toHaveLength(1);
      // Carol's line is full, yet a guest's and a contact's runs grepping her notes are answered: each
      // waits in the line of the one asking, never in the owner's (so they cannot fill hers either).
      const askedBy = (caller: RunCaller) =>
        executeTool(
          findTool("grep_notes") as NonNullable<ReturnType<typeof findTool>>,
          { pattern: "a+!", mode: "regex" },
          {
            app: t.server.context,
            grant: { ownerId: carol.userId, caller, scopes: new Set(["os.notes:read"]), folders: "all" },
            timezone: "UTC",
            signal: new AbortController().signal,
          },
        ) as Promise<{ results: { title: string }[] }>;
      const [guest, contact] = await Promise.all([
        askedBy({ kind: "guest", sessionId: "gs_probe", label: "a guest" }),
        askedBy({ kind: "contact", userId: dave.userId, label: "dave" }),
      ]);
      expect(guest.results.map((r) => r.title)).toEqual(["Bomb"]);
      expect(contact.results.map((r) => r.title)).toEqual(["Bomb"]);
      const answers = await Promise.all(bombs);
      // Dave's grep did not wait for Carol's queue.
      expect(finished.indexOf("dave")).toBeLessThan(finished.length - 1);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]).toMatchObject({ body: { success: false, error: "grep_busy" } });
      expect(Number(refused[0]?.retryAfter)).toBeGreaterThan(0);
      for (const answer of answers.filter((a) => a.status !== 429)) expect(answer.body).toMatchObject({ error: "regex_timeout" });
    }, 60_000);
  });

  describe("accumulate creates many folders with one view update", () => {
    it("creates 3,200 folders in one request, updating the workspace view once", async () => {
      const erin = await t.addUser("erin");
      await erin.client.call("init");
      const views = t.server.context.sync.views;
      const original = views.run.bind(views);
      const runs: string[] = [];
      views.run = (name: string) => {
        runs.push(name);
        return original(name);
      };
      try {
        const paths = Array.from({ length: 400 }, (_, i) => `Top ${i}/a/b/c/d/e/f/g`);
        const result = await erin.client.call("accumulate", { body: { folders: { create: paths } } });
        expect(result.errors).toEqual([]);
        expect(result.foldersCreated).toHaveLength(400);
        // The request's own update, and perhaps the debounced one that follows any document change.
        expect(runs.filter((name) => name === workspaceDocName(erin.userId)).length).toBeLessThanOrEqual(2);
      } finally {
        views.run = original;
      }
      const { count } = await t.server.context.db
        .selectFrom("folders")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("owner_id", "=", erin.userId)
        .executeTakeFirstOrThrow();
      expect(Number(count)).toBe(3200 + 1); // and General
      // Files into the same folders land in them, and a bad path is one entry's error.
      const files = await erin.client.call("accumulate", {
        body: { files: [{ path: "Top 7/a/b/c/d/e/f/g/x.md", content: "x" }], folders: { create: ["Top 1/a", "a//b"] } },
      });
      expect(files).toMatchObject({ created: 1, foldersCreated: [] });
      expect(files.errors.map((e) => e.path)).toEqual(["a//b"]);
    }, 120_000);
  });

  describe("folders of one name under different new parents", () => {
    it.each(storages())("are created together (%s)", async (storage) => {
      const server = storage === "sqlite" ? t : await startTestServer({}, storage);
      try {
        const frank = await server.addUser("frank");
        await frank.client.call("init");
        const made = await frank.client.call("accumulate", {
          body: { folders: { create: ["One/Inbox", "Two/Inbox", "Two/Inbox/Inbox"] } },
        });
        expect(made).toMatchObject({ errors: [], foldersCreated: ["One/Inbox", "Two/Inbox", "Two/Inbox/Inbox"] });
        const nested = await frank.client.call("createFolder", { body: { path: "Same/Same/Same" } });
        expect(nested).toMatchObject({ mode: "created", path: "Same/Same/Same" });
      } finally {
        if (server !== t) await server.stop();
      }
    });
  });

  describe("snapshots need note scopes", () => {
    it("refuses snapshot and restore to a key with only os.snapshots scopes", async () => {
      const note = (await alice.client.call("createNote", { body: { title: "Secret", content: "body" } })).result.note;
      await alice.client.call("createSnapshot", { params: { noteId: note.id }, body: {} });
      const key = await createApiKey(t.server.context.db, { userId: alice.userId, scopes: ["os.snapshots:read", "os.snapshots:write"] });
      const as = (path: string, body: unknown) =>
        t.fetch(`/api/v1${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const snap = await as(`/os/snapshots/${note.id}`, {});
      expect(snap.status).toBe(403);
      expect(await snap.json()).toMatchObject({ error: "insufficient_scope" });
      const restore = await as(`/os/snapshots/${note.id}/restore`, { seq: 1 });
      expect(restore.status).toBe(403);
      expect(await restore.json()).toMatchObject({ error: "insufficient_scope" });
      // With note scopes as well, both work.
      const full = await createApiKey(t.server.context.db, {
        userId: alice.userId,
        scopes: ["os.snapshots:read", "os.snapshots:write", "os.notes:read", "os.notes:write"],
      });
      const ok = await t.fetch(`/api/v1/os/snapshots/${note.id}/restore`, {
        method: "POST",
        headers: { authorization: `Bearer ${full.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ seq: 1 }),
      });
      expect(ok.status).toBe(200);
    });
  });
});

describe("failed authentications are rate limited per address", () => {
  let t: TestServer;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestServer({ authFailuresPerMinute: 6, authFailureBurst: 5 });
    alice = await t.addUser("alice");
  });
  afterAll(() => t.stop());

  const get = (key: string) => t.fetch("/api/v1/os/folders", { headers: { authorization: `Bearer ${key}` } });

  it("answers 429 with Retry-After after the burst of failures, and valid keys still work", async () => {
    for (let i = 0; i < 5; i++) expect((await get(`svc_sk_wrong${i}`)).status).toBe(401);
    const limited = await get("svc_sk_wrong-again");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ success: false, error: "rate_limited" });
    for (let i = 0; i < 20; i++) expect((await get(alice.apiKey)).status).toBe(200);
  });
});

describe("the startup log never shows a database password", () => {
  it.skipIf(!POSTGRES_URL)("redacts user:password@, password= and sslpassword= in the URL", async () => {
    const schema = await createPostgresSchema(POSTGRES_URL as string);
    const url = new URL(schema.url);
    url.username = url.username || "postgres";
    url.password = "userinfo-secret";
    url.searchParams.set("password", "query-secret");
    url.searchParams.set("sslpassword", "ssl-secret");
    let logged = "";
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logged += chunk;
        done();
      },
    });
    const server = await startServer(
      ServerConfigSchema.parse({ port: 0, dataDir: "/tmp/unused-tandem", databaseUrl: url.toString(), logLevel: "info" }),
      pino({ level: "info" }, sink),
    );
    await server.close();
    await schema.drop();
    expect(logged).toContain("tandem server listening");
    for (const secret of ["userinfo-secret", "query-secret", "ssl-secret"]) expect(logged).not.toContain(secret);
  });
});
