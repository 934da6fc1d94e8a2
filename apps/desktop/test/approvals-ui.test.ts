import type { TestServer, TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeRuntimeRecord } from "../src/host/host-context";
import type { EscalationItem } from "../src/shared/desktop-api";
import { readDesktopVersion } from "../src/web/package-version";
import { grantAgentAccess, messageState, type PeerBridge, registerPeerBridge, requestGrant, sendTask, wire } from "./bridge-fixture";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, openSection, screenshot } from "./browser-harness";
import { signInAs } from "./host-harness";

/**
 * The owner's side of delegation, in the browser against a real server: bob pairs this app as his
 * bridge from the Bridge view, accepts alice's grant request in the Approvals view, and decides the
 * tool calls the (fake) runtime asks for while serving alice's task. Only the coding-agent CLI is
 * faked; server, host, storage, realtime stream and page are real.
 */

/** Every step crosses page → host → server → realtime stream → host, on a shared, busy machine. */
const PATIENCE = { timeout: 30_000, interval: 200 };

/** Untrusted text, as a peer's request could make a runtime write it: it must stay text. */
const HOSTILE_SUMMARY = `cat notes.txt <img src=x onerror="window.__injected = true"> && echo done`;
const TOOL_CALLS = [
  { toolName: "Bash", toolInputSummary: HOSTILE_SUMMARY },
  { toolName: "Write", toolInputSummary: "Write summary.md (2 KB)" },
];

describe.skipIf(chromiumMissing("approvals"))("approvals, grants and pairing in web mode against a real server", () => {
  let app: BrowserApp;
  let ts: TestServer;
  let bob: TestUser;
  let alice: TestUser;
  /** alice's own bridge (registered with her key): where bob's runtime replies, and what asks for grants. */
  let aliceBridge: PeerBridge;
  let page: Page;
  let pageErrors: string[];
  const runtimeRecords: FakeRuntimeRecord[] = [];

  /** One request on the server's wire with bob's key, as a script or his browser sends it. */
  const asBob = <T = Record<string, unknown>>(method: string, route: string, body?: unknown) =>
    wire<T>(ts, bob.apiKey, method, route, body);
  const grantStatus = async (grantId: string) => (await asBob<{ status: string }>("GET", `/local-agent/grants/${grantId}`)).status;
  const toolCall = (toolName: string) => page.getByRole("article", { name: toolName });
  const decisionsFor = (toolName: string) =>
    runtimeRecords
      .filter((record) => record.kind === "decision" && record.toolName === toolName)
      .map((record) => (record as { decision: string }).decision);

  beforeAll(async () => {
    app = await startBrowserApp({
      name: "approvals-ui",
      // The package's own version, as the app shows it: the screenshots are the documentation's.
      host: {
        version: await readDesktopVersion(),
        bridge: { adapter: "fake", fakeToolCalls: TOOL_CALLS, onFakeRuntime: (record) => runtimeRecords.push(record) },
      },
    });
    ({ ts } = app);
    bob = await ts.addUser("bob");
    alice = await ts.addUser("alice");
    await signInAs(app.host, ts, bob);
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1200, height: 800 }, locale: "en-US" }));
  });

  afterAll(() => app?.close());

  it("shows the empty state before anything waits", async () => {
    await openSection(page, "Approvals");
    await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("No tool calls are waiting for your decision.");
    await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("Nobody is asking to reach your agent.");
  });

  it("pairs this computer as bob's bridge by device code", async () => {
    await openSection(page, "Bridge");
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
    await screenshot(page, "bridge");

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
    await asBob("POST", "/local-agent/device-code/approve", { userCode, action: "approve" });
    await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Online");
    expect(await page.getByRole("main").textContent()).toContain("Claude Code");
    const pairStatus = await asBob<{ paired: boolean }>("GET", "/local-agent/pair-status");
    expect(pairStatus.paired).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it("accepts alice's grant request and decides the tool calls her task makes the runtime ask for", async () => {
    // The handshake, on the server's wire: alice asks bob for agent access; bob accepts.
    await grantAgentAccess(ts, alice, bob);
    aliceBridge = await registerPeerBridge(ts, alice, "alice-laptop");
    const grantId = await requestGrant(ts, aliceBridge, bob);

    await openSection(page, "Approvals");
    const grantRequests = page.getByRole("region", { name: "Grant requests" });
    await grantRequests.getByText("alice asks to send requests to your agent").waitFor(PATIENCE);
    await grantRequests.getByRole("button", { name: "Accept alice" }).click();
    await expect.poll(() => grantStatus(grantId), PATIENCE).toBe("active");
    const activeGrants = page.getByRole("region", { name: "Active grants" });
    await activeGrants.getByText("alice can send requests to your agent").waitFor(PATIENCE);

    // alice sends a task; bob's bridge runs it and the runtime asks before each tool.
    expect((await ts.cli(["credits", "set", "alice", "5"])).code).toBe(0);
    const receipt = await sendTask(ts, aliceBridge, grantId, "task-1", "Summarise my notes");

    const bash = toolCall("Bash");
    await bash.waitFor(PATIENCE);
    expect(await bash.textContent()).toContain("alice");
    // The summary is shown as the text it is: no element was made of it, no script ran.
    expect(await bash.locator("pre").textContent()).toBe(HOSTILE_SUMMARY);
    expect(await bash.locator("img").count()).toBe(0);
    expect(await page.evaluate(() => (window as { __injected?: boolean }).__injected)).toBeUndefined();
    expect(await bash.textContent()).toMatch(/Expires in [0-5]:[0-5]\d/);
    expect(await page.getByRole("main").textContent()).not.toContain("No tool calls are waiting for your decision.");
    await screenshot(page, "approvals");

    await bash.getByRole("button", { name: "Allow once" }).click();
    await expect.poll(() => decisionsFor("Bash"), PATIENCE).toEqual(["allow"]);

    const write = toolCall("Write");
    await write.waitFor(PATIENCE);
    expect(await write.locator("pre").textContent()).toBe("Write summary.md (2 KB)");
    await write.getByRole("button", { name: "Deny" }).click();
    await expect.poll(() => decisionsFor("Write"), PATIENCE).toEqual(["deny"]);

    // The decisions are the server's record, and the runtime's answer reached alice.
    const approvals = await asBob<{ approvals: { toolName: string; status: string }[] }>("GET", "/local-agent/tool-approvals?limit=10");
    expect(Object.fromEntries(approvals.approvals.map((approval) => [approval.toolName, approval.status]))).toEqual({
      Bash: "allowed",
      Write: "denied",
    });
    await expect.poll(async () => (await messageState(ts, alice, receipt.messageId)).delivery.status, PATIENCE).toBe("replied");
    expect(runtimeRecords.find((record) => record.kind === "finished")).toMatchObject({
      result: expect.stringContaining("Allowed: Bash. Denied: Write."),
    });
    await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("No tool calls are waiting for your decision.");

    // Bob ends the grant from the app.
    await activeGrants.getByRole("button", { name: "Revoke alice" }).click();
    await expect.poll(() => grantStatus(grantId), PATIENCE).toBe("revoked");
    await expect.poll(() => activeGrants.textContent(), PATIENCE).toContain("No grants are active.");
    expect(pageErrors).toEqual([]);
  });

  it("declines a grant request", async () => {
    const grantId = await requestGrant(ts, aliceBridge, bob);
    const grantRequests = page.getByRole("region", { name: "Grant requests" });
    await grantRequests.getByRole("button", { name: "Decline alice" }).click();
    await expect.poll(() => grantStatus(grantId), PATIENCE).toBe("declined");
    await expect.poll(() => grantRequests.textContent(), PATIENCE).toContain("Nobody is asking to reach your agent.");
    expect(pageErrors).toEqual([]);
  });

  it("unpairs the bridge, which revokes its endpoint on the server", async () => {
    await openSection(page, "Bridge");
    await page.getByRole("button", { name: "Unpair" }).click();
    await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Not paired");
    const endpoints = await asBob<{ endpoints: unknown[] }>("GET", "/local-agent/endpoints");
    expect(endpoints.endpoints).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("shows the Approvals badge in the first frame when a request waits (issue #26, point 19)", async () => {
    // carol asks for access to bob's agent: nothing tells bob's app (it reads such requests every 10 s).
    const carol = await ts.addUser("carol");
    await wire(ts, carol.apiKey, "POST", "/network/request", { to: `${bob.username}_coo` });
    // The page opens again; what the Sections list says the moment it is first on screen is kept.
    await page.addInitScript(() => {
      new MutationObserver((_mutations, observer) => {
        const nav = document.querySelector('nav[aria-label="Sections"]');
        if (!nav) return;
        observer.disconnect();
        (window as { __firstBadge?: string }).__firstBadge = nav.querySelector("[role='img']")?.getAttribute("aria-label") ?? "none";
      }).observe(document, { childList: true, subtree: true });
    });
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).waitFor(PATIENCE);
    await expect.poll(() => page.evaluate(() => (window as { __firstBadge?: string }).__firstBadge), PATIENCE).toBe("1 waiting");
    expect(pageErrors).toEqual([]);
  });

  it("an agent's action paused on `ask` shows live, with a badge and a notification; Continue runs it once, Stop tells the agent no", async () => {
    await openSection(page, "Approvals");
    await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("No agent is waiting for your decision.");
    const notified: EscalationItem[] = [];
    app.host.context.events.on("escalation", (item: EscalationItem) => notified.push(item));
    const before = await app.host.status();
    const waitingBefore = before.approvalsPending + before.requestsPending + before.escalationsPending;
    const badge = () =>
      page
        .getByRole("navigation", { name: "Sections" })
        .getByRole("button", { name: /Approvals/ })
        .getByRole("img");

    // bob's managed agent asks him before it lists his todos.
    await bob.client.call("init", { body: {} });
    await bob.client.call("createTodo", { body: { title: "Renew the domain" } });
    const { agent } = await bob.client.call("createManagedAgent", {
      body: { handle: "desk-helper", grant: { todoAccess: { read: true, create: false } }, toolPolicy: { list_todos: "ask" } },
    });
    const run = async () =>
      (await asBob<{ run: { id: number; status: string } }>("POST", `/managed-agents/${agent.id}/runs`, { input: "What are my todos?" }))
        .run;
    const runs = async () => (await bob.client.call("listManagedAgentRuns", { params: { id: agent.id }, query: { limit: 10 } })).runs;
    const pausedAt = Date.now();
    const first = await run();
    expect(first.status).toBe("requires_action");

    const card = page.getByRole("article", { name: "list_todos" });
    await expect.poll(() => card.count(), PATIENCE).toBe(1);
    expect(await card.textContent()).toContain("Asked by One of your agents");
    expect(await card.textContent()).toContain("Your agent desk-helper wants to list todos");
    await expect.poll(() => badge().getAttribute("aria-label"), PATIENCE).toBe(`${waitingBefore + 1} waiting`);
    await expect.poll(() => notified.map((item) => item.toolName), PATIENCE).toEqual(["list_todos"]);
    // Heard on the user stream (escalation.requested), not at the host's next 15 s read.
    expect(Date.now() - pausedAt).toBeLessThan(10_000);
    await screenshot(page, "approvals-agent-actions");

    await card.getByRole("button", { name: "Continue" }).click();
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Continued:" }).count(), PATIENCE).toBe(1);
    await expect.poll(async () => (await runs()).find((one) => one.id === first.id)?.status, PATIENCE).toBe("completed");
    const resumed = (await runs()).find((one) => one.id === first.id);
    expect(resumed?.toolsUsed).toEqual(["list_todos"]);
    expect(resumed?.output).toContain("Renew the domain");
    await expect.poll(() => card.count(), PATIENCE).toBe(0);

    // Stop: the tool does not run; the run goes on told so, and ends.
    const second = await run();
    await expect.poll(() => card.count(), PATIENCE).toBe(1);
    await card.getByRole("button", { name: "Stop" }).click();
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Stopped:" }).count(), PATIENCE).toBe(1);
    await expect.poll(async () => (await runs()).find((one) => one.id === second.id)?.status, PATIENCE).toBe("completed");
    expect((await runs()).find((one) => one.id === second.id)?.output).not.toContain("Renew the domain");
    const [stopped] = (await bob.client.call("listEscalations", { query: { limit: 1 } })).escalations;
    expect(stopped).toMatchObject({ status: "stopped", source: { type: "managed_agent", id: String(agent.id) } });
    await expect.poll(() => badge().getAttribute("aria-label"), PATIENCE).toBe(`${waitingBefore} waiting`);
    expect(pageErrors).toEqual([]);
  });
});
