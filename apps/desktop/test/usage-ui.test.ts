import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, openSection, screenshot, signInOnPage } from "./browser-harness";

const PATIENCE = { timeout: 30_000, intervals: [100, 250, 500, 1000] };

describe.skipIf(chromiumMissing("usage"))("the Usage section in web mode against a real server", () => {
  let app: BrowserApp;
  let ada: TestUser;
  let page: Page;
  let pageErrors: string[];
  let dir: string;

  const panel = (title: string) => page.getByRole("region", { name: title, exact: true });
  /** The section again from the sidebar, so it reads the server now (it polls slowly). */
  const reopen = async () => {
    await openSection(page, "Notes");
    await openSection(page, "Usage");
  };
  const api = (method: string, apiPath: string, body?: unknown) =>
    app.ts.fetch(`/api/v1${apiPath}`, {
      method,
      headers: { authorization: `Bearer ${ada.apiKey}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tandem-usage-ui-"));
    const rateCardFile = path.join(dir, "rates.json");
    await writeFile(
      rateCardFile,
      JSON.stringify({ currency: "EUR", perSeat: 12, perActiveDevice: 3, perMillionTokens: { default: { input: 2, output: 6 } } }),
    );
    app = await startBrowserApp({
      name: "usage-ui",
      server: { rateCardFile, maxTokensPerMonth: 5_000_000 },
      host: { version: await readDesktopVersion() },
    });
    ada = await app.ts.addUser("ada");
    // A month of use: two chats and a heartbeat (the local model), and a bridge's device.
    for (const message of ["what is due today?", "summarise my notes"]) {
      expect((await api("POST", "/chat", { message, stream: false })).status).toBe(200);
    }
    expect((await api("POST", "/heartbeat/run", {})).status).toBe(200);
    expect((await api("POST", "/local-agent/endpoints", { runtime: "claude-code", deviceId: "ada-laptop" })).status).toBe(201);
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 1000 }, locale: "en-US" }));
  });

  afterAll(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("charts this month's tokens by model and by source, with the devices and the totals", async () => {
    await signInOnPage(page, ada.apiKey, app.ts.server.url);
    await expect.poll(() => page.getByTestId("sync-status").textContent(), PATIENCE).toBe("Synced");
    await openSection(page, "Usage");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Usage");
    await expect.poll(() => panel("Tokens by source").textContent(), PATIENCE).toContain("heartbeat");
    expect(await panel("Tokens by source").textContent()).toContain("chat");
    // Chart.js drew each chart on its canvas.
    const canvases = page.getByRole("img", { name: /input and output tokens this month/ });
    expect(await canvases.count()).toBe(2);
    const drawn = await canvases.first().evaluate((canvas) => (canvas as HTMLCanvasElement).toDataURL().length);
    expect(drawn).toBeGreaterThan(2000);
    const totals = panel("This month");
    expect(await totals.textContent()).toMatch(/Agent runs3/);
    expect(await totals.getByRole("list", { name: "Devices active this month" }).textContent()).toBe("ada-laptop");
    expect(pageErrors).toEqual([]);
  });

  it("shows the simulated invoice at the server's rates", async () => {
    const invoice = panel("Simulated invoice");
    await expect.poll(() => invoice.textContent(), PATIENCE).toContain("Seat");
    expect(await invoice.textContent()).toContain("Active devices1 device€3.00");
    // Some tokens cost under a cent; the seat and the device make the total.
    expect(await invoice.textContent()).toContain("Total€15.00");
  });

  it("edits the account's budget, refuses a bad one in words, and keeps other scopes' budgets", async () => {
    const keys = (await (await api("GET", "/agent/usage")).json()) as { usage: { byKey: { apiKeyId: string }[] } };
    const keyId = keys.usage.byKey[0]?.apiKeyId as string;
    expect((await api("PUT", "/metering/budgets", { budgets: [{ scope: "apiKey", scopeId: keyId, runsPerDay: 40 }] })).status).toBe(200);
    const budget = panel("Budget");
    expect(await budget.textContent()).toContain("at most 5,000,000 tokens a month");
    await budget.getByLabel("Tokens a month").fill("-5");
    await budget.getByRole("button", { name: "Save budget" }).click();
    await expect.poll(() => budget.getByRole("alert").textContent(), PATIENCE).toContain("a budget is a whole number, 0 or more");

    await budget.getByLabel("Tokens a month").fill("100000");
    await budget.getByLabel("Agent runs a day").fill("50");
    await budget.getByRole("button", { name: "Save budget" }).click();
    await expect.poll(() => budget.getByRole("status").textContent(), PATIENCE).toBe("Budget saved.");
    await expect.poll(() => budget.getByRole("progressbar", { name: "Tokens budget used" }).count(), PATIENCE).toBe(1);
    const saved = (await (await api("GET", "/metering/budgets")).json()) as {
      budgets: { scope: string; tokensPerMonth: number | null; runsPerDay: number | null }[];
    };
    expect(saved.budgets.map((b) => [b.scope, b.tokensPerMonth, b.runsPerDay])).toEqual([
      ["account", 100000, 50],
      ["apiKey", null, 40],
    ]);
    await screenshot(page, "usage");
    expect(pageErrors).toEqual([]);
  });

  it("edits an API key's and a managed agent's own budgets, keeping the others", async () => {
    const created = await api("POST", "/managed-agents", { handle: "ada-helper" });
    expect(created.status).toBe(201);
    const agentId = String(((await created.json()) as { agent: { id: number } }).agent.id);
    await reopen();
    const scoped = panel("Key and agent budgets");
    const agentForm = scoped.getByRole("form", { name: "Agent ada-helper" });
    await expect.poll(() => agentForm.count(), PATIENCE).toBe(1);
    // The key budgeted through the API above shows its budget.
    const keyForm = scoped.getByRole("form", { name: /^API key / });
    expect(await keyForm.getByLabel("Agent runs a day").inputValue()).toBe("40");

    await agentForm.getByLabel("Agent runs a day").fill("lots");
    await agentForm.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => scoped.getByRole("alert").textContent(), PATIENCE).toContain("ada-helper: agent runs a day");
    await agentForm.getByLabel("Agent runs a day").fill("7");
    await agentForm.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => scoped.getByRole("status").textContent(), PATIENCE).toBe("Budget of ada-helper saved.");
    await keyForm.getByLabel("Tokens a month").fill("9000");
    await keyForm.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => scoped.getByRole("status").textContent(), PATIENCE).toMatch(/Budget of .* saved\./);
    await expect
      .poll(async () => {
        const { budgets } = (await (await api("GET", "/metering/budgets")).json()) as {
          budgets: { scope: string; scopeId: string | null; tokensPerMonth: number | null; runsPerDay: number | null }[];
        };
        return budgets.map((b) => [b.scope, b.scope === "agent" ? b.scopeId : null, b.tokensPerMonth, b.runsPerDay]);
      }, PATIENCE)
      .toEqual([
        ["account", null, 100000, 50],
        ["agent", agentId, null, 7],
        ["apiKey", null, 9000, 40],
      ]);
    expect(pageErrors).toEqual([]);
  });
});
