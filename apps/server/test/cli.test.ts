import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN_PATH, CHECKOUT, createPostgresSchema, POSTGRES_URL, runCli, startTestServer, type TestServer } from "./harness";

describe("tandem-server CLI against a running server", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  it("users add prints one JSON line with a working key", async () => {
    const result = await t.cli(["users", "add", "alice", "--name", "Alice", "--email", "alice@example.com"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0] as string) as { userId: number; username: string; apiKey: string };
    expect(created).toMatchObject({ userId: expect.any(Number), username: "alice", apiKey: expect.stringMatching(/^svc_sk_/) });
    const response = await t.fetch("/api/v1/identity", { headers: { authorization: `Bearer ${created.apiKey}` } });
    expect(await response.json()).toMatchObject({ username: "alice", name: "Alice", email: "alice@example.com" });
  });

  it("keys create makes a scoped, labelled key, and keys revoke stops it at once", async () => {
    const created = JSON.parse((await t.cli(["keys", "create", "alice", "--scopes", "os.notes:read", "--label", "reader"])).stdout) as {
      keyId: string;
      apiKey: string;
      scopes: string[];
      label: string;
    };
    expect(created).toMatchObject({ scopes: ["os.notes:read"], label: "reader" });
    const headers = { authorization: `Bearer ${created.apiKey}` };
    expect((await t.fetch("/api/v1/os/folders", { headers })).status).toBe(200);
    const revoked = await t.cli(["keys", "revoke", created.keyId]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ keyId: created.keyId, revokedAt: expect.any(String) });
    expect((await t.fetch("/api/v1/os/folders", { headers })).status).toBe(401);

    const listed = (await t.cli(["keys", "list", "alice"])).stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { keyId: string; revokedAt: string | null; lastUsedAt: string | null });
    expect(listed.length).toBeGreaterThanOrEqual(2);
    const reader = listed.find((k) => k.keyId === created.keyId);
    expect(reader).toMatchObject({
      label: "reader",
      scopes: ["os.notes:read"],
      revokedAt: expect.any(String),
      lastUsedAt: expect.any(String),
    });
    expect(JSON.stringify(listed)).not.toContain(created.apiKey.slice(-32));
  });

  it("views rebuild restores lost views from the documents (rows that survived keep their ids)", async () => {
    const alice = await t.addUser("rebuilder");
    const { folder } = await alice.client.call("createFolder", { body: { name: "Kept" } });
    const note = (await alice.client.call("createNote", { body: { title: "Rebuilt", content: "findable aardvark", folderId: folder.id } }))
      .result.note;
    const { db } = t.server.context;
    await db.deleteFrom("notes").where("owner_id", "=", alice.userId).execute();
    await db.deleteFrom("note_bodies").execute();
    expect((await alice.client.raw("getNote", { params: { id: note.id } })).status).toBe(404);

    const rebuilt = await t.cli(["views", "rebuild"]);
    expect(rebuilt.code).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ workspaces: expect.any(Number), notes: expect.any(Number) });
    const listed = await alice.client.call("listNotes", { query: { folderId: folder.id } });
    expect(listed.notes.map((n) => n.title)).toEqual(["Rebuilt"]);
    expect((await alice.client.call("searchNotes", { body: { query: "aardvark" } })).results).toHaveLength(1);
  });

  it.each([
    [["users", "add", "alice"], 1, "already taken"],
    [["users", "add", "Not Valid"], 1, "username"],
    [["keys", "create", "nobody"], 1, "not found"],
    [["keys", "create", "alice", "--scopes", "os.everything:read"], 2, "unknown scope"],
    [["keys", "revoke", "doesnotexist"], 1, "not found"],
    [["users"], 2, "unknown command"],
    [["users", "add"], 2, "missing <username>"],
    [["frobnicate"], 2, "unknown command"],
    [["serve", "--no-such-flag"], 2, "Unknown option"],
  ])("%j exits %i with a clear message", async (args, code, message) => {
    const result = await t.cli(args);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe("");
  });
});

function waitForListening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let log = "";
    child.stderr?.on("data", (chunk) => {
      log += chunk;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(log);
      if (match) resolve(match[1] as string);
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code} before listening:\n${log}`)));
  });
}

describe("tandem-server serve", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "tandem-serve-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("serves until SIGTERM, then finishes in-flight work and exits 0", async () => {
    const child = spawn(process.execPath, [BIN_PATH, "serve", "--port", "0", "--data-dir", dataDir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    const url = await waitForListening(child);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    // The data survives a restart: the CLI still finds the database.
    expect((await runCli(["users", "add", "afterstop", "--data-dir", dataDir])).code).toBe(0);
  });

  it("loses nothing acknowledged when killed with SIGKILL right after a write, and stores nothing it refused", async () => {
    const { stdout } = await runCli(["users", "add", "crashtest", "--data-dir", dataDir]);
    const { apiKey } = JSON.parse(stdout) as { apiKey: string };
    const start = () =>
      spawn(process.execPath, [BIN_PATH, "serve", "--port", "0", "--data-dir", dataDir, "--max-document-bytes", "65536"], {
        stdio: ["ignore", "ignore", "pipe"],
      });
    const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
    const first = start();
    const url = await waitForListening(first);
    const created = await fetch(`${url}/api/v1/os/notes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ title: "Crash", content: "written before the crash" }),
    });
    expect(created.status).toBe(201);
    const { result } = (await created.json()) as { result: { note: { id: number } } };
    const patch = (content: string) =>
      fetch(`${url}/api/v1/os/notes/${result.note.id}`, { method: "PATCH", headers, body: JSON.stringify({ content }) });
    const refused = await patch(`<p>refused ${"x".repeat(100_000)}</p>`);
    expect(refused.status).toBe(413);
    expect((await patch("<p>written before the crash, then edited</p>")).status).toBe(200);
    const exited = new Promise((resolve) => first.once("exit", resolve));
    first.kill("SIGKILL");
    await exited;

    const second = start();
    const again = await waitForListening(second);
    try {
      const read = await fetch(`${again}/api/v1/os/notes/${result.note.id}`, { headers });
      expect(read.status).toBe(200);
      const { markdown } = ((await read.json()) as { note: { markdown: string } }).note;
      expect(markdown).toContain("written before the crash, then edited");
      expect(markdown).not.toContain("refused");
    } finally {
      second.kill("SIGTERM");
    }
  });

  it("refuses invalid configuration naming the setting", async () => {
    const result = await runCli(["serve", "--port", "not-a-port", "--data-dir", dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("port");
    const url = await runCli(["serve", "--database-url", "mysql://x", "--data-dir", dataDir]);
    expect(url.code).toBe(1);
    expect(url.stderr).toContain("databaseUrl");
  });
});

describe("tandem-server and its database", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "tandem-cli-db-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("refuses to create a database a command expected to exist, naming where it looked", async () => {
    const dataDir = path.join(root, "missing");
    const result = await runCli(["users", "add", "alice", "--data-dir", dataDir]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(path.join(dataDir, "tandem.sqlite"));
    expect(result.stderr).toContain("--create-database");
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(path.join(dataDir, "tandem.sqlite"))).toBe(false);
  });

  it("creates one when asked, and says which database every command used", async () => {
    const dataDir = path.join(root, "created");
    const created = await runCli(["users", "add", "alice", "--data-dir", dataDir, "--create-database"]);
    expect(created.code).toBe(0);
    expect(created.stderr).toContain(`database ${path.join(dataDir, "tandem.sqlite")}`);
    const listed = await runCli(["keys", "list", "alice", "--data-dir", dataDir]);
    expect(listed.code).toBe(0);
    expect(listed.stderr).toContain(path.join(dataDir, "tandem.sqlite"));
  });

  it("finds the checkout's database from any folder when no data directory is given", async () => {
    const elsewhere = path.join(root, "some", "subfolder");
    await mkdir(elsewhere, { recursive: true });
    // TANDEM_DATA_DIR, when set, says where the database is, whatever the working directory.
    const dataDir = path.join(root, "from-env");
    expect((await runCli(["users", "add", "carol", "--data-dir", dataDir, "--create-database"])).code).toBe(0);
    const fromEnv = await runCli(["keys", "list", "carol"], { TANDEM_DATA_DIR: dataDir }, elsewhere);
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout).toContain("initial key");
    // Without it, the default is data/ at the root of the checkout, never one in the working directory.
    const byDefault = await runCli(["keys", "list", "nobody-here"], { TANDEM_DATA_DIR: "" }, elsewhere);
    expect(byDefault.stderr).toContain(path.join(CHECKOUT, "data", "tandem.sqlite"));
    expect(existsSync(path.join(elsewhere, "data"))).toBe(false);
  });

  // Registered only with PostgreSQL (CI sets TANDEM_TEST_DATABASE_URL).
  const postgresUrl = POSTGRES_URL;
  if (postgresUrl) {
    it("refuses an empty PostgreSQL schema unless asked to create the tables", async () => {
      const schema = await createPostgresSchema(postgresUrl);
      try {
        const refused = await runCli(["credits", "show", "alice", "--database-url", schema.url]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain("--create-database");
        expect((await runCli(["users", "add", "alice", "--database-url", schema.url, "--create-database"])).code).toBe(0);
        expect((await runCli(["credits", "show", "alice", "--database-url", schema.url])).code).toBe(0);
      } finally {
        await schema.drop();
      }
    });
  }

  it("serve creates the database it is pointed at", async () => {
    const dataDir = path.join(root, "served");
    const child = spawn(process.execPath, [BIN_PATH, "serve", "--port", "0", "--data-dir", dataDir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    await waitForListening(child);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect((await runCli(["users", "add", "bob", "--data-dir", dataDir])).code).toBe(0);
  });
});

describe("tandem-server serve, failing and stopping cleanly", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "tandem-serve-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("says in one line that the port is taken, and exits 1", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const result = await runCli(["serve", "--port", String(port), "--data-dir", dataDir]);
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split("\n")).toEqual([expect.stringContaining(`127.0.0.1:${port} is already in use`)]);
    } finally {
      blocker.close();
    }
  });

  it("exits 0 on SIGTERM after importing many notes", async () => {
    const { stdout } = await runCli(["users", "add", "importer", "--data-dir", dataDir, "--create-database"]);
    const { apiKey } = JSON.parse(stdout) as { apiKey: string };
    const child = spawn(process.execPath, [BIN_PATH, "serve", "--port", "0", "--data-dir", dataDir], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    const url = await waitForListening(child);
    const texts = Array.from({ length: 15 }, (_, i) => ({ title: `Imported ${i}`, content: `note number ${i}`, folder: "Import" }));
    const imported = await fetch(`${url}/api/v1/accumulate`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ texts }),
    });
    expect(imported.status).toBe(200);
    expect(((await imported.json()) as { created: number }).created).toBe(15);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 60_000);
});

describe("tandem-server serve's access log", () => {
  let dataDir: string;
  let apiKey: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "tandem-access-"));
    apiKey = (
      JSON.parse((await runCli(["users", "add", "logged", "--data-dir", dataDir, "--create-database"])).stdout) as { apiKey: string }
    ).apiKey;
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  /** Serves with `args`, makes two requests (one with secrets in its query and headers), stops; answers the log lines. */
  async function logOf(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Record<string, unknown>[]> {
    const child = spawn(process.execPath, [BIN_PATH, "serve", "--port", "0", "--data-dir", dataDir, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let log = "";
    child.stderr.on("data", (chunk) => {
      log += chunk;
    });
    const url = await waitForListening(child);
    expect((await fetch(`${url}/api/v1/identity?token=query-secret`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
    expect((await fetch(`${url}/api/v1/os/folders`)).status).toBe(401);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(log).not.toContain("query-secret");
    expect(log).not.toContain(apiKey);
    return log
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it("logs one line per request at info by default: method, path without its query, status, duration, user", async () => {
    const requests = (await logOf([])).filter((line) => line.msg === "request");
    expect(requests).toEqual([
      expect.objectContaining({
        level: 30,
        method: "GET",
        path: "/api/v1/identity",
        status: 200,
        userId: expect.any(Number),
        durationMs: expect.any(Number),
      }),
      expect.objectContaining({ level: 30, method: "GET", path: "/api/v1/os/folders", status: 401, userId: null }),
    ]);
  });

  it("is configurable by flag and by environment", async () => {
    expect((await logOf(["--access-log", "silent"])).filter((line) => line.msg === "request")).toEqual([]);
    const debug = await logOf(["--log-level", "debug"], { TANDEM_ACCESS_LOG: "debug" });
    expect(debug.filter((line) => line.msg === "request").map((line) => line.level)).toEqual([20, 20]);
    const refused = await runCli(["serve", "--access-log", "loud", "--data-dir", dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("accessLog");
  });
});

describe("the Node.js check before npm install, npm start and npm test", () => {
  const check = (version?: string) =>
    spawnSync(process.execPath, [path.join(CHECKOUT, "scripts/check-node.cjs"), ...(version ? [version] : [])], { encoding: "utf8" });

  it("refuses an older Node.js in one plain line, and lets this one (and the minimum) through", () => {
    for (const old of ["20.18.0", "22.11.0", "v18.20.4"]) {
      const run = check(old);
      expect(run.status, old).toBe(1);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toContain(`Tandem needs Node.js 22.12 or newer; this is ${old.replace(/^v/, "")}.`);
    }
    for (const fine of [undefined, "22.12.0", "23.0.0", "24.21.0"]) expect(check(fine).status, fine).toBe(0);
    // The root scripts the README names run it first.
    const { scripts } = JSON.parse(readFileSync(path.join(CHECKOUT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    for (const hook of ["preinstall", "prestart", "pretest"]) expect(scripts[hook]).toBe("node scripts/check-node.cjs");
  });
});
