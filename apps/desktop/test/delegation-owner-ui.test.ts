import { mkdir, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { TestServer, TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import {
  installFakeCli,
  ownerDecides,
  type PeerBridge,
  pairBridge,
  registerPeerBridge,
  requestGrant,
  sendTask,
  wire,
} from "./bridge-fixture";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, openSection, screenshot } from "./browser-harness";
import { signInAs } from "./host-harness";

const FAKE_CLAUDE = fileURLToPath(new URL("./bridge-fake-claude.mjs", import.meta.url));

/**
 * The owner's view of delegation, in the browser against a real server: agent-access requests
 * (the handshake) answered in Approvals with the permissions in words, a badge counting everything
 * waiting, and a Bridge view that tells the runtime's real state (a missing `claude` is "Not
 * installed", not "Online") and logs every task: from whom, how it ended, the tool calls decided.
 * Only the `claude` CLI is faked (test/bridge-fake-claude.mjs), and at first it is missing.
 */
const PATIENCE = { timeout: 60_000, interval: 250 };
const TEST_TIMEOUT = 180_000;

describe.skipIf(chromiumMissing("delegation owner"))("the owner's view of delegation (web mode, real server)", () => {
  let app: BrowserApp;
  let ts: TestServer;
  let bob: TestUser;
  let alice: TestUser;
  let carol: TestUser;
  let aliceBridge: PeerBridge;
  let claude: { dir: string; command: string };
  /** Where the host looks for `claude`: empty until the test "installs" it. */
  let claudeCommand: string;
  let page: Page;
  let pageErrors: string[];

  const badge = () =>
    page
      .getByRole("navigation", { name: "Sections" })
      .getByRole("button", { name: /Approvals/ })
      .locator(".badge");
  const badgeText = async () => ((await badge().count()) === 0 ? null : await badge().textContent());
  const asBob = <T = Record<string, unknown>>(method: string, route: string, body?: unknown) =>
    wire<T>(ts, bob.apiKey, method, route, body);
  const tasks = () => page.getByRole("list", { name: "Tasks received" }).locator(".bridge-task");

  beforeAll(async () => {
    claude = await installFakeCli("claude", FAKE_CLAUDE);
    claudeCommand = path.join(claude.dir, "not-yet", "claude");
    app = await startBrowserApp({
      name: "delegation-owner-ui",
      host: { version: await readDesktopVersion(), bridge: { claudeCommand, heartbeatMs: 5_000 } },
    });
    ({ ts } = app);
    bob = await ts.addUser("bob");
    alice = await ts.addUser("alice");
    carol = await ts.addUser("carol");
    await signInAs(app.host, ts, bob);
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1200, height: 900 }, locale: "en-US" }));
  }, TEST_TIMEOUT);

  afterAll(async () => {
    await app?.close();
    if (claude) await rm(claude.dir, { recursive: true, force: true });
  });

  it(
    "shows agent-access requests in Approvals with the permissions in words; Accept gives exactly those",
    async () => {
      await wire(ts, alice.apiKey, "POST", "/network/request", { to: "bob_coo" });
      // The badge counts the request, not only tool calls.
      await expect.poll(badgeText, PATIENCE).toBe("1");
      await openSection(page, "Approvals");
      const section = page.getByRole("region", { name: "Agent access requests" });
      const card = section.getByRole("listitem").filter({ hasText: "alice" });
      await expect.poll(() => card.textContent(), PATIENCE).toContain("alice asks for agent access");
      expect(await card.textContent()).toContain("alice's agent may ask your agent for help, and reach nothing of yours.");

      await card.getByRole("combobox", { name: "Your notes" }).selectOption({ label: "Read" });
      await card.getByRole("combobox", { name: "Your todos" }).selectOption({ label: "Read and edit" });
      expect(await card.locator(".access-summary").textContent()).toContain(
        "alice's agent may ask your agent for help, and read your notes and read and edit your todos.",
      );
      await screenshot(page, "approvals-access-request");
      await card.getByRole("button", { name: "Accept alice's access request" }).click();

      type Network = { network: { contacts: { username: string; yourPermissionsToThem: unknown }[] } };
      await expect
        .poll(
          async () =>
            (await asBob<Network>("GET", "/network")).network.contacts.find((contact) => contact.username === "alice")
              ?.yourPermissionsToThem,
          PATIENCE,
        )
        .toEqual({ notesAccess: { scope: "all", access: "read" }, todosAccess: { scope: "all", access: "write" } });
      await expect.poll(() => section.textContent(), PATIENCE).toContain("Nobody is asking for agent access.");
      await expect.poll(badgeText, PATIENCE).toBeNull();

      // Declining gives nothing.
      await wire(ts, carol.apiKey, "POST", "/network/request", { to: "bob_coo" });
      await section.getByRole("button", { name: "Decline carol's access request" }).click();
      await expect.poll(() => section.textContent(), PATIENCE).toContain("Nobody is asking for agent access.");
      const after = await asBob<Network>("GET", "/network");
      expect(after.network.contacts.find((contact) => contact.username === "carol")).toBeUndefined();
      expect(pageErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "says Claude Code is not installed rather than Online when its program is missing",
    async () => {
      await pairBridge(ts, app.host.api, bob, "claude-code");
      await openSection(page, "Bridge");
      await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Not installed");
      expect(await page.getByRole("main").getByRole("alert").textContent()).toContain("Claude Code is not installed on this computer");
      await expect.poll(() => page.getByRole("main").textContent(), PATIENCE).toContain("No tasks yet.");
      expect(pageErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    "logs each task: from whom, its outcome (runtime_error and why), and the tool calls allowed and denied",
    async () => {
      aliceBridge = await registerPeerBridge(ts, alice, "alice-laptop");
      expect((await ts.cli(["credits", "set", "alice", "5"])).code).toBe(0);
      const grantId = await requestGrant(ts, aliceBridge, bob);
      // A grant request waits too: the badge counts it.
      await expect.poll(badgeText, PATIENCE).toBe("1");
      await app.host.api.acceptGrant({ grantId });
      await expect.poll(badgeText, PATIENCE).toBeNull();

      // With `claude` missing, the task fails, and the log says why.
      await sendTask(ts, aliceBridge, grantId, "task-1", "Which files changed?");
      await expect.poll(() => tasks().count(), PATIENCE).toBe(1);
      const failed = tasks().first();
      await expect.poll(() => failed.locator(".bridge-task-outcome").textContent(), PATIENCE).toBe("Failed (runtime_error)");
      expect(await failed.locator(".bridge-task-head").textContent()).toContain("from alice");
      expect(await failed.locator(".bridge-task-request").textContent()).toBe("Which files changed?");
      expect(await failed.locator(".bridge-task-detail").textContent()).toContain("Claude Code is not installed");

      // Installed meanwhile: the view notices by itself, and the next task runs.
      await mkdir(path.dirname(claudeCommand), { recursive: true });
      await symlink(claude.command, claudeCommand);
      await expect.poll(() => page.getByTestId("bridge-state").textContent(), PATIENCE).toBe("Online");

      await sendTask(ts, aliceBridge, grantId, "task-2", "And now?");
      await ownerDecides(app.host.api, "Bash", "allow");
      await ownerDecides(app.host.api, "Read", "deny");
      await expect.poll(() => tasks().count(), PATIENCE).toBe(2);
      const answered = tasks().first();
      await expect.poll(() => answered.locator(".bridge-task-outcome").textContent(), PATIENCE).toBe("Answered");
      await expect
        .poll(() => answered.getByRole("list", { name: "Tool calls" }).getByRole("listitem").allTextContents(), PATIENCE)
        .toEqual(["Bash allowed", "Read denied"]);
      await screenshot(page, "bridge-activity");
      expect(pageErrors).toEqual([]);
    },
    TEST_TIMEOUT,
  );
});
