import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./harness";

describe("GET / in a browser", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    // With no account yet, `/` is the first-run form (oauth.test.ts); this is the page afterwards.
    await t.addUser("someone");
  });
  afterAll(() => t.stop());

  it("is an HTML page with the name, version, health and links to the reference and the docs", async () => {
    const response = await t.fetch("/", { headers: { accept: "text/html" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await response.text();
    const { version } = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    expect(html).toContain("<h1>Tandem server</h1>");
    expect(html).toContain(`version ${version}`);
    expect(html).toMatch(/ok<\/span>, \d+ document\(s\) open/);
    for (const href of ["/healthz", "/api/v1/reference", "/api/v1/openapi.json"]) expect(html).toContain(`href="${href}"`);
    expect(html).toContain("operating.md");
    expect(html).not.toContain("route_not_found");
  });

  it("runs no script, and its policy allows its own style block and nothing else", async () => {
    const response = await t.fetch("/");
    const html = await response.text();
    expect(html).not.toMatch(/<script|\son[a-z]+=/i);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? "";
    expect(csp).toContain(`style-src 'sha256-${createHash("sha256").update(style).digest("base64")}'`);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
  });

  it("leaves every other unknown path a JSON 404", async () => {
    const response = await t.fetch("/nothing-here");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ success: false, error: "route_not_found" });
    expect((await t.fetch("/", { method: "POST" })).status).toBe(404);
  });
});
