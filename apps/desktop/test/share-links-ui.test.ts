import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, openSection, screenshot, signInOnPage } from "./browser-harness";

const PATIENCE = { timeout: 30_000, intervals: [100, 250, 500, 1000] };
const DAY_MS = 24 * 60 * 60 * 1000;

/** A guest's words with markup: the transcript must show them as text. */
const GUEST_WORDS = `Hello <img src=x onerror="window.__sharePwned=1"><b>there</b>, what do you know about tomatoes?`;

describe.skipIf(chromiumMissing("share links"))("the Share links section in web mode against a real server", () => {
  let app: BrowserApp;
  let ada: TestUser;
  let page: Page;
  let pageErrors: string[];

  const panel = (title: string) => page.getByRole("region", { name: title });
  const linkRow = (label: string) => panel("Your links").getByRole("listitem", { name: label });
  const serverLinks = async () => (await ada.client.call("listShareLinks", { query: { status: "all", limit: 50 } })).links;
  const guestChat = (token: string, message: string) =>
    app.ts.fetch("/api/chat/guest-v04", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, message, visitorName: "Zed <i>the guest</i>" }),
    });

  beforeAll(async () => {
    app = await startBrowserApp({ name: "share-links-ui", host: { version: await readDesktopVersion() } });
    ada = await app.ts.addUser("ada");
    ({ page, pageErrors } = await app.openPage({
      viewport: { width: 1280, height: 1000 },
      locale: "en-US",
      permissions: ["clipboard-read", "clipboard-write"],
    }));
  });

  afterAll(async () => {
    await app?.close();
  });

  it("opens from the sidebar and says there is no link yet", async () => {
    await signInOnPage(page, ada.apiKey, app.ts.server.url);
    await expect.poll(() => page.getByTestId("sync-status").textContent(), PATIENCE).toBe("Synced");
    await openSection(page, "Share links");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Share links");
    await expect.poll(() => panel("Your links").textContent(), PATIENCE).toContain("No active share link.");
    await expect.poll(() => panel("Visitors").textContent(), PATIENCE).toContain("No visitor yet.");
    expect(pageErrors).toEqual([]);
  });

  it("creates links with the capabilities chosen, and copies one", async () => {
    const form = panel("New share link");
    await form.getByLabel("Label (guests see it)").fill("Garden questions");
    await form.getByLabel("Expires after").selectOption("24h");
    await form.getByLabel("Read your todos").check();
    await form.getByLabel("Must sign in with a Tandem account").uncheck();
    await form.getByRole("button", { name: "Create link" }).click();
    await expect.poll(() => form.getByRole("status").first().textContent(), PATIENCE).toContain("Created “Garden questions”");
    expect(await form.textContent()).toContain("Reads your notes · Reads your todos");

    const [created] = await serverLinks();
    expect(created).toMatchObject({ label: "Garden questions", requireSignIn: false, localAgent: false, notesAccess: "read" });
    expect(created?.capabilities.todos).toBe(true);
    const expiresIn = Date.parse(created?.expiresAt ?? "") - Date.now();
    expect(expiresIn).toBeGreaterThan(DAY_MS - 60_000);
    expect(expiresIn).toBeLessThanOrEqual(DAY_MS);

    // The form starts again from the defaults; a link answered from this computer says so in words.
    expect(await form.getByLabel("Label (guests see it)").inputValue()).toBe("");
    await form.getByLabel("Label (guests see it)").fill("Ask my laptop");
    await form.getByLabel("Answer from this computer's coding agent").check();
    expect(await form.textContent()).toContain(`While this computer's bridge is paired and "Answer guests from this computer" is on`);
    await form.getByRole("button", { name: "Create link" }).click();
    await expect.poll(() => linkRow("Ask my laptop").count(), PATIENCE).toBe(1);
    expect(await linkRow("Ask my laptop").textContent()).toContain("Answered from this computer's coding agent when it answers in time");
    expect((await serverLinks()).find((link) => link.label === "Ask my laptop")?.localAgent).toBe(true);

    const garden = linkRow("Garden questions");
    await garden.getByRole("button", { name: "Copy link" }).click();
    await expect.poll(() => garden.getByRole("status").textContent(), PATIENCE).toBe("Link copied.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created?.url);
    expect(await garden.getByRole("textbox", { name: "Link" }).inputValue()).toBe(created?.url);
    expect(pageErrors).toEqual([]);
  });

  it("renews a link for longer", async () => {
    const garden = linkRow("Garden questions");
    await garden.getByLabel("Renew “Garden questions” for").selectOption("7d");
    await garden.getByRole("button", { name: "Renew" }).click();
    await expect.poll(() => panel("Your links").getByRole("status").last().textContent(), PATIENCE).toContain("Renewed “Garden questions”");
    const renewed = (await serverLinks()).find((link) => link.label === "Garden questions");
    expect(Date.parse(renewed?.expiresAt ?? "") - Date.now()).toBeGreaterThan(7 * DAY_MS - 60_000);
  });

  it("shows a guest's conversation as text after the guest chats on the link", async () => {
    const garden = (await serverLinks()).find((link) => link.label === "Garden questions");
    const chat = await guestChat(garden?.token ?? "", GUEST_WORDS);
    expect(chat.status).toBe(200);

    await linkRow("Garden questions").getByRole("button", { name: "Visitors" }).click();
    const visitors = panel("Visitors");
    await expect.poll(() => visitors.getByRole("button", { name: /Zed <i>the guest<\/i>/ }).count(), PATIENCE).toBe(1);
    await visitors.getByRole("button", { name: /Zed/ }).click();
    const transcript = visitors.getByRole("list", { name: /Conversation with Zed/ });
    await expect.poll(() => transcript.textContent(), PATIENCE).toContain(GUEST_WORDS);
    expect(await transcript.getByRole("listitem").count()).toBe(2);
    expect(await transcript.locator("img, b, i").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __sharePwned?: number }).__sharePwned)).toBeUndefined();
    // The link's counts follow (the list is read again after an action, and every 30 s).
    await page.reload();
    await openSection(page, "Share links");
    await expect.poll(() => linkRow("Garden questions").textContent(), PATIENCE).toContain("1 visitor · 1 conversation · 2 messages");
    // The same guest (the same browser) starts another conversation: still one visitor, listed once.
    expect((await guestChat(garden?.token ?? "", "One more thing")).status).toBe(200);
    await page.reload();
    await openSection(page, "Share links");
    await expect.poll(() => linkRow("Garden questions").textContent(), PATIENCE).toContain("1 visitor · 2 conversations · 4 messages");
    await linkRow("Garden questions").getByRole("button", { name: "Visitors" }).click();
    const zed = page.getByRole("region", { name: "Visitors" }).getByRole("button", { name: /Zed/ });
    await expect.poll(() => zed.count(), PATIENCE).toBe(1);
    expect(await zed.textContent()).toContain("2 conversations · 4 messages");
    await zed.click();
    // Both conversations open under the one visitor.
    await expect
      .poll(
        () =>
          panel("Visitors")
            .getByRole("list", { name: /Conversation with Zed/ })
            .count(),
        PATIENCE,
      )
      .toBe(2);
    await screenshot(page, "share-links");
    expect(pageErrors).toEqual([]);
  });

  it("revokes a link after asking, and the guest route then refuses it", async () => {
    const garden = linkRow("Garden questions");
    await garden.getByRole("button", { name: "Revoke" }).click();
    await garden.getByRole("alertdialog").getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => panel("Your links").getByRole("status").last().textContent(), PATIENCE).toContain("Revoked “Garden questions”");
    await expect.poll(() => linkRow("Garden questions").count(), PATIENCE).toBe(0);
    const revoked = (await serverLinks()).find((link) => link.label === "Garden questions");
    expect(revoked?.revokedAt).not.toBeNull();
    const refused = await guestChat(revoked?.token ?? "", "Still there?");
    expect(refused.status).toBe(404);
    expect(pageErrors).toEqual([]);
  });
});
