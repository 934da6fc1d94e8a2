import { randomUUID } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { RawMemoryDeviceClient } from "@tandem/core/raw-memory-client";
import { newKeyPair } from "@tandem/core/raw-memory-crypto";
import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, openSection, screenshot, signInOnPage } from "./browser-harness";
import { tempDir } from "./host-harness";

const PATIENCE = { timeout: 30_000, intervals: [100, 250, 500, 1000] };
const TEST_SCRYPT = { N: 2 ** 14, r: 8, p: 1 };

describe.skipIf(chromiumMissing("raw memory"))("the Raw memory section in web mode against a real server", () => {
  let app: BrowserApp;
  let ada: TestUser;
  let page: Page;
  let pageErrors: string[];
  let agents: string;
  let recoveryCode = "";

  const panel = (title: string) => page.getByRole("region", { name: title });

  async function session(name: string, text: string) {
    const dir = path.join(agents, ".claude", "projects", "-home-ada-garden");
    await mkdir(dir, { recursive: true });
    const lines = [
      { type: "user", message: { role: "user", content: text } },
      { type: "assistant", message: { role: "assistant", content: `Done: ${name}` } },
    ];
    await writeFile(path.join(dir, `${randomUUID()}.jsonl`), `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
  }

  /** The section again from the sidebar, so it reads the host's state now (it polls slowly). */
  async function reopen() {
    await openSection(page, "Notes");
    await openSection(page, "Raw memory");
  }

  beforeAll(async () => {
    agents = await tempDir("tandem-raw-ui-agents-");
    app = await startBrowserApp({
      name: "raw-memory-ui",
      host: {
        version: await readDesktopVersion(),
        rawMemory: {
          roots: { claudeCode: path.join(agents, ".claude", "projects"), codex: path.join(agents, ".codex", "sessions") },
          pollMs: 60_000,
          quietMs: 0,
          scrypt: TEST_SCRYPT,
        },
      },
    });
    ada = await app.ts.addUser("ada");
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 900 }, locale: "en-US" }));
  });

  afterAll(async () => {
    await app?.close();
    await rm(agents, { recursive: true, force: true });
  });

  it("turns on: the recovery code is shown once, and capture starts after “I saved it”", async () => {
    await signInOnPage(page, ada.apiKey, app.ts.server.url);
    await expect.poll(() => page.getByTestId("sync-status").textContent(), PATIENCE).toBe("Synced");
    await openSection(page, "Raw memory");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Raw memory");
    await panel("Raw memory is off").getByRole("button", { name: "Turn on raw memory" }).click();
    const code = page.getByLabel("Recovery code", { exact: true });
    await expect.poll(() => code.textContent(), PATIENCE).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{1,4}){6}$/);
    recoveryCode = (await code.textContent()) ?? "";
    const start = page.getByRole("button", { name: "Start capturing" });
    expect(await start.isDisabled()).toBe(true);
    await page.getByLabel("I saved my recovery code").check();
    await start.click();
    await expect.poll(() => panel("Captured sessions").textContent(), PATIENCE).toContain("Nothing captured yet");
    expect(pageErrors).toEqual([]);
  });

  it("lists captured sessions with size and time, and searches them on this computer", async () => {
    await session("tomatoes", "How deep should the tomato trellis posts go? Use token ghp_abcdefghijklmnopqrstuvwxyz0123456789");
    await session("beds", "Plan the raised beds for the spring");
    // A pass takes what is finished when it looks; a file it did not see finished yet waits for the next pass.
    await expect
      .poll(async () => {
        await app.host.rawMemory.tick();
        return (await app.host.api.getRawMemory()).captured.length;
      }, PATIENCE)
      .toBe(2);
    await reopen();
    await expect.poll(() => panel("Captured sessions").textContent(), PATIENCE).toContain("2 sessions");
    expect(await panel("Captured sessions").textContent()).toContain("Claude Code");
    expect(await panel("Captured sessions").textContent()).toMatch(/\d+ bytes|KB/);
    const search = panel("Search");
    await search.getByLabel("Search your sessions (decrypted on this computer)").fill("trellis");
    await search.getByRole("button", { name: "Search" }).click();
    const results = search.getByRole("list", { name: "Search results" });
    await expect.poll(() => results.textContent(), PATIENCE).toContain("tomato trellis");
    expect(await results.textContent()).toContain("[REDACTED:");
    expect(await results.textContent()).not.toContain("ghp_abcdef");
    await screenshot(page, "raw-memory");
    expect(pageErrors).toEqual([]);
  });

  it("forgets another computer (the key rotates) and turns off", async () => {
    const other = new RawMemoryDeviceClient(ada.client, { deviceId: randomUUID(), name: "old-laptop", ...newKeyPair() });
    await other.enrol();
    await other.recover(recoveryCode);
    await reopen();
    const row = panel("Computers").getByRole("listitem", { name: "old-laptop" });
    await expect.poll(() => row.count(), PATIENCE).toBe(1);
    await row.getByRole("button", { name: "Forget" }).click();
    await row.getByRole("alertdialog").getByRole("button", { name: "Forget" }).click();
    await expect.poll(() => panel("Computers").getByRole("status").textContent(), PATIENCE).toContain("Forgot old-laptop");
    expect((await ada.client.call("getRawMemoryKeys")).currentVersion).toBe(2);
    await expect.poll(() => row.count(), PATIENCE).toBe(0);

    await panel("Capture on this computer").getByRole("button", { name: "Turn off" }).click();
    await expect.poll(() => panel("Raw memory is off").count(), PATIENCE).toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it("on a second computer, asks for the recovery code and then reads the other computer's sessions", async () => {
    // Bea turned raw memory on elsewhere (a device of her own) and captured a session there.
    const bea = await app.ts.addUser("bea");
    const laptop = new RawMemoryDeviceClient(bea.client, { deviceId: randomUUID(), name: "bea-laptop", ...newKeyPair() });
    await laptop.enrol();
    const code = await laptop.setUp({ scrypt: TEST_SCRYPT });
    await laptop.upload(
      laptop.seal({
        recordId: randomUUID(),
        runtime: "codex",
        sessionIdHash: "a".repeat(64),
        createdAt: new Date().toISOString(),
        plaintext: new TextEncoder().encode(`${JSON.stringify({ type: "response_item", payload: { content: "compost ratios" } })}\n`),
      }),
    );

    await page.getByRole("button", { name: "Sign out" }).click();
    await signInOnPage(page, bea.apiKey, app.ts.server.url);
    await openSection(page, "Raw memory");
    await panel("Raw memory is off").getByRole("button", { name: "Turn on raw memory" }).click();
    const recover = panel("Enter your recovery code");
    await expect.poll(() => recover.count(), PATIENCE).toBe(1);
    await recover.getByLabel("Recovery code").fill("0000-0000-0000-0000-0000-0000-00");
    await recover.getByRole("button", { name: "Open raw memory" }).click();
    await expect.poll(() => recover.textContent(), PATIENCE).toContain("not this account's");
    await recover.getByLabel("Recovery code").fill(code.toLowerCase());
    await recover.getByRole("button", { name: "Open raw memory" }).click();
    await expect.poll(() => panel("Captured sessions").textContent(), PATIENCE).toContain("bea-laptop");
    const search = panel("Search");
    await search.getByLabel("Search your sessions (decrypted on this computer)").fill("compost");
    await search.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => search.getByRole("list", { name: "Search results" }).textContent(), PATIENCE).toContain("compost ratios");
    // The wrong code's 422 is the one failed request the browser reports.
    expect(pageErrors.filter((error) => !error.includes("status of 422"))).toEqual([]);
  });
});
