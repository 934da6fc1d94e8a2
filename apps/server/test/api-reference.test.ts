import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staleDocs } from "./docs-tables";
import { startTestServer, type TestServer, type TestUser } from "./harness";

const run = promisify(execFile);

const unescapeHtml = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_m, name: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[name] as string);

const curlMissing = !existsSync("/usr/bin/curl");
if (curlMissing) console.warn("Skipping the API reference's curl examples: /usr/bin/curl is absent.");

describe("the API reference at /api/v1/reference", () => {
  let t: TestServer;
  let alice: TestUser;
  let page: string;
  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    await alice.client.call("createNote", { body: { title: "First", content: "so that id 1 exists" } });
    page = await (await t.fetch("/api/v1/reference")).text();
  });
  afterAll(() => t.stop());

  it("shows every path whole, with the /api/v1 prefix", async () => {
    const openapi = (await (await t.fetch("/api/v1/openapi.json")).json()) as { paths: Record<string, { servers?: unknown }> };
    const shown = [...page.matchAll(/<h3><span class="method [a-z]+">[A-Z]+<\/span> <code>([^<]+)<\/code>/g)].map((m) => m[1]);
    expect(shown.length).toBeGreaterThan(50);
    // Paths outside the v1 base (A2A) name their own server, the root.
    const whole = Object.entries(openapi.paths).map(([p, item]) => (item.servers ? p : `/api/v1${p}`));
    expect(whole).toContain("/a2a/{handle}");
    expect(new Set(shown)).toEqual(new Set(whole));
  });

  it("docs/api.md's notes table and docs/oauth.md's scopes are generated from the route table and the advertised scopes", async () => {
    // `npm run docs:tables` rewrites them; a route or scope added without it fails here.
    expect(staleDocs()).toEqual([]);
    const doc = (name: string) => readFileSync(new URL(`../../../docs/${name}`, import.meta.url), "utf8");
    const notesTable = /<!-- docs:tables notes-routes[\s\S]*?<!-- \/docs:tables notes-routes -->/.exec(doc("api.md"))?.[0] ?? "";
    const rows = [...notesTable.matchAll(/^\| (GET|POST|PATCH|DELETE) +\| `([^`]+)`/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(rows).toContain("GET /os/notes/{id}");
    expect(rows.filter((row) => row === "PATCH /os/notes/{id}")).toHaveLength(1);
    expect(new Set(rows).size).toBe(rows.length);
    // Both ways: every scope the server advertises is listed, and nothing else but the OpenID ones.
    const advertised = (await (await t.fetch("/.well-known/oauth-protected-resource")).json()) as { scopes_supported: string[] };
    const scopeList = /<!-- docs:tables oauth-scopes[^\n]*\n`([^`]*)`/.exec(doc("oauth.md"))?.[1] ?? "";
    expect(new Set(scopeList.split(/\s+/))).toEqual(
      new Set(["openid", "profile", "email", "offline_access", ...advertised.scopes_supported]),
    );
  });

  it.skipIf(curlMissing)(
    "gives a curl example per operation that reaches its route when pasted into a shell",
    async () => {
      const examples = [...page.matchAll(/<pre class="curl">([\s\S]*?)<\/pre>/g)].map((m) => unescapeHtml(m[1] as string));
      expect(examples.length).toBe([...page.matchAll(/<section id=/g)].length);
      const env = { ...process.env, TANDEM_URL: t.server.url, TANDEM_API_KEY: alice.apiKey, TANDEM_DEVICE_TOKEN: "svc_dev_none" };
      for (const example of examples) {
        // `-w` puts the status after the body. A stream stays open: a few seconds are enough to see it answer;
        // the rest get time enough for a loaded machine.
        const limit = /stream/.test(example) ? 3 : 15;
        const { stdout } = await run("bash", ["-c", `${example} --max-time ${limit} -s -w '\\n%{http_code}' || true`], { env });
        const status = Number(stdout.slice(stdout.lastIndexOf("\n") + 1));
        // The sample ids and values may name nothing (404, 409, 400 from a service), but the route is reached,
        // the JSON is read and nothing fails.
        expect(status, example).toBeGreaterThanOrEqual(200);
        expect(status, example).toBeLessThan(500);
        expect(stdout, example).not.toMatch(/route_not_found|invalid_json|unsupported_encoding/);
      }
    },
    120_000,
  );
});
