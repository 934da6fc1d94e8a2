import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Host, startHost } from "../src/host/host";
import type { FakeRuntimeRecord } from "../src/host/host-context";
import { FileSecretStore } from "../src/host/session/file-secret-store";
import { readDesktopVersion } from "../src/web/package-version";
import { type RunningWebServer, startWebServer } from "../src/web/web-server";

/**
 * The owner's side of delegation, in the browser against a real server: bob pairs this app as his
 * bridge from the Bridge view, accepts alice's grant request in the Approvals view, and decides the
 * tool calls the (fake) runtime asks for while serving alice's task. Only the coding-agent CLI is
 * faked; server, host, storage, realtime stream and page are real.
 */

const CHROMIUM_PATH = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
const DESKTOP_DIR = fileURLToPath(new URL("..", import.meta.url));
const SCREENSHOTS = fileURLToPath(new URL("../../../docs/screenshots/", import.meta.url));
/** Every step crosses page → host → server → realtime stream → host, on a shared, busy machine. */
const PATIENCE = { timeout: 30_000, interval: 200 };

/** Untrusted text, as a peer's request could make a runtime write it: it must stay text. */
const HOSTILE_SUMMARY = `cat notes.txt <img src=x onerror="window.__injected = true"> && echo done`;
const TOOL_CALLS = [
  { toolName: "Bash", toolInputSummary: HOSTILE_SUMMARY },
  { toolName: "Write", toolInputSummary: "Write summary.md (2 KB)" },
];

const chromiumMissing = !existsSync(CHROMIUM_PATH);
if (chromiumMissing) {
  console.warn(`Skipping the approvals browser tests: ${CHROMIUM_PATH} is absent (install Debian's chromium package).`);
}

/** The real production build, written to a temporary directory so it never races a developer's `out/`. */
async function buildApp(outDir: string): Promise<void> {
  const electronVite = path.join(
    path.dirname(createRequire(import.meta.url).resolve("electron-vite/package.json")),
    "bin/electron-vite.js",
  );
  await promisify(execFile)(process.execPath, [electronVite, "build", "--outDir", outDir, "--logLevel", "warn"], { cwd: DESKTOP_DIR });
}

describe.skipIf(chromiumMissing)("approvals, grants and pairing in web mode against a real server", () => {
  let outDir: string;
  let ts: TestServer;
  let bob: TestUser;
  let alice: TestUser;
  let host: Host;
  let web: RunningWebServer;
  let browser: Browser;
  let page: Page;
  const runtimeRecords: FakeRuntimeRecord[] = [];
  const pageErrors: string[] = [];

  /** One request on the server's wire, as a script or another person's app sends it. */
  async function wire<T = Record<string, unknown>>(user: TestUser, method: string, route: string, body?: unknown): Promise<T> {
    const response = await ts.fetch(`/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${user.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json()) as T;
    if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${JSON.stringify(answer)}`);
    return answer;
  }

  const section = (name: string) => page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name });
  const toolCall = (toolName: string) => page.getByRole("article", { name: toolName });
  const decisionsFor = (toolName: string) =>
    runtimeRecords
      .filter((record) => record.kind === "decision" && record.toolName === toolName)
      .map((record) => (record as { decision: string }).decision);

  beforeAll(async () => {
    outDir = await mkdtemp(path.join(tmpdir(), "tandem-approvals-ui-"));
    [browser, ts] = await Promise.all([
      chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }),
      startTestServer(),
      buildApp(outDir),
    ]);
    bob = await ts.addUser("bob");
    alice = await ts.addUser("alice");
    const dataDir = path.join(outDir, "data");
    host = await startHost({
      mode: "web",
      version: await readDesktopVersion(),
      dataDir,
      secrets: new FileSecretStore(dataDir),
      bridge: { adapter: "fake", fakeToolCalls: TOOL_CALLS, onFakeRuntime: (record) => runtimeRecords.push(record) },
    });
    await host.api.signInWithApiKey({ serverUrl: ts.server.url, apiKey: bob.apiKey });
    web = await startWebServer(host.api, { rendererDir: path.join(outDir, "renderer") });
    page = await browser.newPage({ viewport: { width: 1200, height: 800 }, locale: "en-US" });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    await page.goto(web.url);
    await mkdir(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await host?.close();
    await ts?.stop();
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it("shows the empty state before anything waits", async () => {
    await section("Approvals").click();
    await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("No tool calls are waiting for your decision.");
    await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("Nobody is asking to reach your agent.");
  });

  it("pairs this computer as bob's bridge by device code", async () => {
    await section("Bridge").click();
    await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Not paired");
    // A pairing can be abandoned before it is approved.
    await page.getByRole("button", { name: "Pair this computer" }).click();
    await page.getByRole("status", { name: "Pairing code" }).waitFor(PATIENCE);
    await page.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Not paired");

    await page.getByRole("radio", { name: "Codex" }).check();
    await page.getByRole("radio", { name: "Claude Code" }).check();
    await page.getByRole("button", { name: "Pair this computer" }).click();

    const code = page.getByRole("status", { name: "Pairing code" });
    await code.waitFor(PATIENCE);
    const userCode = (await code.textContent()) ?? "";
    expect(userCode).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Waiting for approval");
    await page.screenshot({ path: path.join(SCREENSHOTS, "bridge.png") });

    // Web mode cannot open the system browser: the page opens the server's approval page itself.
    const [approvalPage] = await Promise.all([
      page.waitForEvent("popup"),
      page.getByRole("button", { name: "Open approval page" }).click(),
    ]);
    await approvalPage.waitForLoadState();
    expect(approvalPage.url()).toContain(`/api/v1/local-agent/pair?code=${userCode}`);
    expect(await approvalPage.textContent("body")).toContain(userCode);
    await approvalPage.close();

    // Bob approves (the page would send exactly this with his key).
    await wire(bob, "POST", "/local-agent/device-code/approve", { userCode, action: "approve" });
    await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Online");
    expect(await page.getByRole("main").textContent()).toContain("Claude Code");
    const pairStatus = await wire<{ paired: boolean }>(bob, "GET", "/local-agent/pair-status");
    expect(pairStatus.paired).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it("accepts alice's grant request and decides the tool calls her task makes the runtime ask for", async () => {
    // The handshake, on the server's wire: alice asks bob for agent access; bob accepts.
    await wire(alice, "POST", "/network/request", { to: "bob_coo" });
    const requests = await wire<{ incoming: { requestId: number; type: string }[] }>(bob, "GET", "/network/requests");
    const request = requests.incoming.find((candidate) => candidate.type === "agent");
    await wire(bob, "POST", "/network/accept", { requestId: request?.requestId, type: "agent", action: "accept", permissions: {} });

    // alice's own bridge (registered with her key) is where bob's runtime replies.
    const registered = await wire<{ endpoint: { endpointId: string }; deviceToken: string }>(alice, "POST", "/local-agent/endpoints", {
      runtime: "codex",
      deviceId: "alice-laptop",
    });
    const aliceDevice = { ...alice, apiKey: registered.deviceToken };
    const { endpointId } = registered.endpoint;
    const session = await wire<{ sessionHandle: string }>(aliceDevice, "POST", "/local-agent/sessions", { endpointId, allowInbound: true });
    await wire(aliceDevice, "PUT", "/local-agent/default-route", { endpointId, sessionHandle: session.sessionHandle });

    const requested = await wire<{ communicationSessionId: string }>(alice, "POST", "/local-agent/grants", {
      target: { kind: "person_default_runtime", principalId: String(bob.userId) },
    });
    const grantId = requested.communicationSessionId;

    await section("Approvals").click();
    const grantRequests = page.getByRole("region", { name: "Grant requests" });
    await grantRequests.getByText("alice asks to send requests to your agent").waitFor(PATIENCE);
    await grantRequests.getByRole("button", { name: "Accept alice" }).click();
    await expect
      .poll(async () => (await wire<{ status: string }>(bob, "GET", `/local-agent/grants/${grantId}`)).status, PATIENCE)
      .toBe("active");
    const activeGrants = page.getByRole("region", { name: "Active grants" });
    await activeGrants.getByText("alice can send requests to your agent").waitFor(PATIENCE);

    // alice sends a task; bob's bridge runs it and the runtime asks before each tool.
    expect((await ts.cli(["credits", "set", "alice", "5"])).code).toBe(0);
    const receipt = await wire<{ messageId: string }>(alice, "POST", "/local-agent/messages", {
      communicationSessionId: grantId,
      clientMessageId: "task-1",
      kind: "task_invite",
      payload: { task: "Summarise my notes" },
    });

    const bash = toolCall("Bash");
    await bash.waitFor(PATIENCE);
    expect(await bash.textContent()).toContain("alice");
    // The summary is shown as the text it is: no element was made of it, no script ran.
    expect(await bash.locator("pre").textContent()).toBe(HOSTILE_SUMMARY);
    expect(await bash.locator("img").count()).toBe(0);
    expect(await page.evaluate(() => (window as { __injected?: boolean }).__injected)).toBeUndefined();
    expect(await bash.textContent()).toMatch(/Expires in [0-5]:[0-5]\d/);
    expect(await page.getByRole("main").textContent()).not.toContain("No tool calls are waiting for your decision.");
    await page.screenshot({ path: path.join(SCREENSHOTS, "approvals.png") });

    await bash.getByRole("button", { name: "Allow once" }).click();
    await expect.poll(() => decisionsFor("Bash"), PATIENCE).toEqual(["allow"]);

    const write = toolCall("Write");
    await write.waitFor(PATIENCE);
    expect(await write.locator("pre").textContent()).toBe("Write summary.md (2 KB)");
    await write.getByRole("button", { name: "Deny" }).click();
    await expect.poll(() => decisionsFor("Write"), PATIENCE).toEqual(["deny"]);

    // The decisions are the server's record, and the runtime's answer reached alice.
    const approvals = await wire<{ approvals: { toolName: string; status: string }[] }>(bob, "GET", "/local-agent/tool-approvals?limit=10");
    expect(Object.fromEntries(approvals.approvals.map((approval) => [approval.toolName, approval.status]))).toEqual({
      Bash: "allowed",
      Write: "denied",
    });
    await expect
      .poll(
        async () =>
          (await wire<{ delivery: { status: string } }>(alice, "GET", `/local-agent/messages/${receipt.messageId}`)).delivery.status,
        PATIENCE,
      )
      .toBe("replied");
    expect(runtimeRecords.find((record) => record.kind === "finished")).toMatchObject({
      result: expect.stringContaining("Allowed: Bash. Denied: Write."),
    });
    await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("No tool calls are waiting for your decision.");

    // Bob ends the grant from the app.
    await activeGrants.getByRole("button", { name: "Revoke alice" }).click();
    await expect
      .poll(async () => (await wire<{ status: string }>(bob, "GET", `/local-agent/grants/${grantId}`)).status, PATIENCE)
      .toBe("revoked");
    await expect.poll(() => activeGrants.textContent(), PATIENCE).toContain("No grants are active.");
    expect(pageErrors).toEqual([]);
  });

  it("declines a grant request", async () => {
    const requested = await wire<{ communicationSessionId: string }>(alice, "POST", "/local-agent/grants", {
      target: { kind: "person_default_runtime", principalId: String(bob.userId) },
    });
    const grantRequests = page.getByRole("region", { name: "Grant requests" });
    await grantRequests.getByRole("button", { name: "Decline alice" }).click();
    const grant = () => wire<{ status: string }>(bob, "GET", `/local-agent/grants/${requested.communicationSessionId}`);
    await expect.poll(async () => (await grant()).status, PATIENCE).toBe("declined");
    await expect.poll(() => grantRequests.textContent(), PATIENCE).toContain("Nobody is asking to reach your agent.");
    expect(pageErrors).toEqual([]);
  });

  it("unpairs the bridge, which revokes its endpoint on the server", async () => {
    await section("Bridge").click();
    await page.getByRole("button", { name: "Unpair" }).click();
    await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Not paired");
    const endpoints = await wire<{ endpoints: unknown[] }>(bob, "GET", "/local-agent/endpoints");
    expect(endpoints.endpoints).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
