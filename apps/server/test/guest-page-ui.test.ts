import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setPassword } from "../src/auth/passwords";
import { ok } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { screenshotPath } from "./screenshots";
import type { ShareLinkBody } from "./share-fixture";

const CHROMIUM_PATH = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const chromiumMissing = !existsSync(CHROMIUM_PATH);
if (chromiumMissing) console.warn(`Skipping the guest page browser tests: ${CHROMIUM_PATH} is absent (install Debian's chromium package).`);

/** The page a share link opens, in a real browser under its strict CSP, on a phone-sized screen. */
describe.skipIf(chromiumMissing)("guest chat page in a browser", () => {
  let t: TestServer;
  let alice: TestUser;
  let browser: Browser;
  let page: Page;
  let folderId: number;
  const problems: string[] = [];

  const createLink = async (body: Record<string, unknown>) =>
    (await ok<{ shareLink: ShareLinkBody }>(t, alice.apiKey, "POST", "/os/share", { requireSignIn: false, ...body }, [201])).shareLink;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestServer(), chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })]);
    alice = await t.addUser("alice");
    await alice.client.call("init");
    folderId = (await alice.client.call("createFolder", { body: { name: "Open" } })).folder.id;
    await alice.client.call("createNote", {
      body: { title: "Garden <b>plan</b>", content: "The tomatoes go in the south bed. <img src=x onerror=alert(1)>", folderId },
    });
    const context = await browser.newContext({ viewport: { width: 375, height: 700 }, isMobile: true, hasTouch: true });
    page = await context.newPage();
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("sends a message, shows the answer's Markdown as the Agent does (markup as text), and a reload continues the session", async () => {
    const link = await createLink({ scope: "folders", folderIds: [folderId], label: "Garden <questions>" });
    const response = await page.goto(link.url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'nonce-");
    await expect(page.locator("header h1").textContent()).resolves.toBe("alice's agent");
    expect(await page.locator("header p").textContent()).toContain("Garden <questions>");

    await page.fill("#message", "Where do the tomatoes go?");
    await page.click("#send");
    const answer = page.locator(".msg.assistant").first();
    await answer.waitFor({ timeout: 20_000 });
    expect(await answer.textContent()).toContain("south bed");
    // The note's markup arrives as text: no element was made of it.
    expect(await page.locator(".msg img, .msg b").count()).toBe(0);
    // The answer's Markdown is read as the desktop's Agent reads it: the note's title in bold, no asterisks.
    expect(await answer.locator("strong").first().textContent()).toBe("Garden <b>plan</b>");
    expect(await answer.textContent()).not.toContain("**");

    // Fits a 375-pixel screen: nothing wider than the viewport, the send button on screen.
    const widths = (await page.evaluate(
      "({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })",
    )) as {
      scroll: number;
      client: number;
    };
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    const send = await page.locator("#send").boundingBox();
    expect(send && send.x + send.width).toBeLessThanOrEqual(375);
    await page.screenshot({ path: screenshotPath("guest-page") });

    await page.reload();
    await page.locator(".msg.assistant").first().waitFor({ timeout: 10_000 });
    expect(await page.locator(".msg").count()).toBe(2);
    expect(await page.locator(".msg.assistant strong").count()).toBeGreaterThan(0);
    await page.fill("#message", "thanks");
    await page.press("#message", "Enter");
    await page.locator(".msg.assistant").nth(1).waitFor({ timeout: 20_000 });
    const sessions = await ok<{ conversations: { messageCount: number }[] }>(
      t,
      alice.apiKey,
      "GET",
      `/os/network/conversations?shareToken=${link.token}`,
    );
    // Two questions and their two answers.
    expect(sessions.conversations.map((c) => c.messageCount)).toEqual([4]);
    expect(problems).toEqual([]);
  });

  it("says clearly when the link has expired or was revoked, also mid-conversation", async () => {
    const link = await createLink({ expiresIn: "1h" });
    await page.goto(link.url);
    await page.fill("#message", "hello");
    await page.click("#send");
    await page.locator(".msg.assistant").first().waitFor({ timeout: 20_000 });

    await ok(t, alice.apiKey, "DELETE", `/os/share/${link.id}`);
    await page.fill("#message", "still there?");
    await page.click("#send");
    await page.waitForFunction("document.getElementById('status')?.textContent?.includes('no longer valid')");
    expect(await page.locator("#send").isDisabled()).toBe(true);

    const expired = await createLink({ expiresIn: "1h" });
    t.server.context.clock.advance(3_600_000 + 1000);
    const response = await page.goto(expired.url);
    expect(response?.status()).toBe(404);
    expect(await page.locator("#gone").textContent()).toContain("expired or was revoked");
    expect(problems.filter((p) => !p.includes("404"))).toEqual([]);
  });

  it("a link that needs sign-in has the guest sign in with their account, never asks for a key", async () => {
    const bob = await t.addUser("bob");
    await setPassword(t.server.context.db, bob.userId, "bob's long password");
    const link = await createLink({ requireSignIn: true, expiresIn: "never" });
    const before = problems.length;
    await page.goto(link.url);
    expect(await page.locator("#sign-in").textContent()).toContain("Sign in with yours");
    expect(await page.locator("input").count()).toBe(0);
    expect(await page.content()).not.toMatch(/api key/i);

    // The server's own sign-in page, which brings the guest back to the link.
    await page.click("#sign-in-link");
    await page.waitForURL(/\/signin\?next=/);
    await page.fill("#username", "bob");
    await page.fill("#password", "bob's long password");
    await Promise.all([page.waitForURL(link.url), page.click("button[type=submit]")]);
    expect(await page.locator("#visitor").textContent()).toContain("Signed in as bob");
    await page.fill("#message", "hello");
    await page.click("#send");
    await page.locator(".msg.assistant").first().waitFor({ timeout: 20_000 });
    const { conversations } = await ok<{ conversations: { visitor: { username: string | null } }[] }>(
      t,
      alice.apiKey,
      "GET",
      `/os/network/conversations?shareToken=${link.token}`,
    );
    expect(conversations.map((c) => c.visitor.username)).toEqual(["bob"]);
    // A reload continues the signed-in conversation.
    await page.reload();
    await page.locator(".msg.assistant").first().waitFor({ timeout: 10_000 });

    // The browser's session speaks only with the page's CSRF token: another site's request cannot use it.
    const forged = await page.evaluate(async (token) => {
      const r = await fetch("/api/chat/guest-v04", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token, message: "hi" }),
      });
      return { status: r.status, body: await r.json() };
    }, link.token);
    expect(forged).toMatchObject({ status: 401, body: { success: false, error: "sign_in_required" } });
    // The forged request's 401 is the only complaint.
    expect(problems.slice(before).filter((p) => !p.includes("401"))).toEqual([]);
  });
});
