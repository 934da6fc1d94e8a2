import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ok } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

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
if (chromiumMissing) console.warn(`Skipping the team join page browser test: ${CHROMIUM_PATH} is absent.`);

/** The page an inviteUrl opens, in a real browser: its script runs under the page's strict CSP. */
describe.skipIf(chromiumMissing)("team join page in a browser", () => {
  let ts: TestServer;
  let owner: TestUser;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    [ts, browser] = await Promise.all([startTestServer(), chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })]);
    owner = await ts.addUser("owner");
    page = await browser.newPage();
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("request", (request) => requested.push(request.url()));
  });
  afterAll(async () => {
    await browser?.close();
    await ts?.stop();
  });

  it("joins with the key typed into the page; the token never appears in a URL the browser requests", async () => {
    const bob = await ts.addUser("bob");
    const { inviteUrl, token } = await ok<{ inviteUrl: string; token: string }>(ts, owner.apiKey, "POST", "/os/team/invite", {});
    await page.goto(inviteUrl);
    // The page takes the token out of the address bar at once.
    expect(page.url()).not.toContain("#");

    await page.click("#join");
    await page.waitForSelector("#result.error");
    expect(await page.textContent("#result")).toContain("API key");

    await page.fill("#api-key", "svc_sk_wrongwrongwrongwrongwrongwrongwrongwrongww");
    await page.click("#join");
    await page.locator("#result", { hasText: "not valid" }).waitFor();

    await page.fill("#api-key", bob.apiKey);
    await page.click("#join");
    await page.waitForSelector("#result.ok");
    expect(await page.textContent("#result")).toContain("You joined Team as a member");
    expect(await page.inputValue("#api-key")).toBe("");
    expect((await ok<{ role: string }>(ts, bob.apiKey, "GET", "/os/team")).role).toBe("member");

    expect(requested.some((url) => url.includes(token.slice(8)))).toBe(false);
    expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
  });

  it("says so when the link has lost its token", async () => {
    await page.goto(`${ts.server.apiUrl}/os/team/join`);
    await page.waitForSelector("#result.error");
    expect(await page.textContent("#result")).toContain("no invite");
    expect(await page.isHidden("#form")).toBe(true);
  });
});
