import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, ok } from "./delegation-fixture";
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
if (chromiumMissing)
  console.warn(`Skipping the pairing page browser tests: ${CHROMIUM_PATH} is absent (install Debian's chromium package).`);

/** The approval page in a real browser: its script must run under the page's strict CSP. */
describe.skipIf(chromiumMissing)("pairing approval page in a browser", () => {
  let ts: TestServer;
  let alice: TestUser;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  const start = (deviceId: string, label: string) =>
    ok<{ userCode: string; pollToken: string; approvalUrl: string }>(ts, "anonymous", "POST", "/local-agent/device-code/start", {
      deviceId,
      runtime: "claude-code",
      label,
    });
  const poll = async (pollToken: string) => (await call(ts, null, "POST", "/local-agent/device-code/poll", { pollToken })).body.status;

  beforeAll(async () => {
    [ts, browser] = await Promise.all([startTestServer(), chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })]);
    alice = await ts.addUser("alice");
    page = await browser.newPage();
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await ts?.stop();
  });

  it("approves with the key typed into the page, and shows the hostile label as text", async () => {
    const hostile = `<img src=x onerror="window.pwned=1">`;
    const started = await start("alice-laptop", hostile);
    await page.goto(started.approvalUrl);
    expect(await page.textContent(".code")).toBe(started.userCode);
    expect(await page.getByText(hostile).count()).toBe(1);
    expect(await page.evaluate("typeof window.pwned")).toBe("undefined");

    await page.click('button[data-action="approve"]');
    await page.waitForSelector("#result.error");
    expect(await page.textContent("#result")).toContain("API key");

    await page.fill("#api-key", "svc_sk_wrongwrongwrongwrongwrongwrongwrongwrongww");
    await page.click('button[data-action="approve"]');
    // A locator, not waitForFunction: the page's CSP forbids eval, which a string predicate needs.
    await page.locator("#result", { hasText: "not valid" }).waitFor();
    expect(await poll(started.pollToken)).toBe("pending");

    await page.fill("#api-key", alice.apiKey);
    await page.click('button[data-action="approve"]');
    await page.waitForSelector("#result.ok");
    expect(await page.textContent("#result")).toContain("Approved");
    expect(await page.inputValue("#api-key")).toBe("");
    expect(await poll(started.pollToken)).toBe("approved");
    expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
  });

  it("denies", async () => {
    const started = await start("alice-phone", "Phone");
    await page.goto(started.approvalUrl);
    await page.fill("#api-key", alice.apiKey);
    await page.click('button[data-action="deny"]');
    await page.waitForSelector("#result.ok");
    expect(await page.textContent("#result")).toContain("Denied");
    expect(await poll(started.pollToken)).toBe("denied");
  });
});
