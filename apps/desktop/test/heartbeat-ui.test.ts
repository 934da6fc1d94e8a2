import { todayIn } from "@tandem/core/dates";
import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, freePort, screenshot, signInOnPage } from "./browser-harness";

/** Runs go page → host → server (one agent turn) and back, and replication backs off while the server is down: be patient. */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };
const WAIT = { timeout: 60_000 };
const TIME_ZONE = "Europe/Paris";
/** A todo title that is markup: the heartbeat quotes it in its message and its actions, and nothing may run. */
const HOSTILE_TITLE = `<img src=x onerror="window.__pwned = 1">Review the <b>Atlas</b> budget`;
/** The checklist the owner writes: on the ACTIONS tier, the local model adds the todo it asks for. */
const CHECKLIST = "# My heartbeat\n\n- Todos: anything overdue, or of high priority?\n- Remind me to water the office plants\n";

describe.skipIf(chromiumMissing("heartbeat"))("the Heartbeat section in web mode against a real server", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];

  const sidebar = () => page.getByRole("navigation", { name: "Sections" });
  const settings = () => page.getByRole("form", { name: "Heartbeat settings" });
  const checklist = () => page.getByRole("textbox", { name: "Checklist" });
  const history = () => page.getByRole("region", { name: "History" });
  const lastResult = () => page.getByRole("region", { name: "Last result" });
  const conversations = () => page.getByRole("navigation", { name: "Conversations" });
  const agentBadge = () =>
    sidebar()
      .getByRole("button", { name: /^Agent/ })
      .getByRole("img");
  const syncStatus = () => page.getByTestId("sync-status").textContent();
  const offlineNotice = () => page.getByRole("status").filter({ hasText: "The agent needs the server" });
  const pwned = () => page.evaluate(() => (window as { __pwned?: unknown }).__pwned);
  const openHeartbeat = async () => {
    await page.keyboard.press("Control+5");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Heartbeat");
  };
  const todoTitles = async () => {
    const { result } = await user.client.call("listTodos", { query: { limit: 100 } });
    return result.todos.map((todo) => todo.title);
  };

  beforeAll(async () => {
    // A fixed port: the offline test stops the server and starts it again at the same address.
    app = await startBrowserApp({
      name: "heartbeat-ui",
      server: { port: await freePort() },
      host: { version: await readDesktopVersion() },
    });
    user = await app.ts.addUser("ada");
    const today = todayIn(TIME_ZONE);
    await user.client.call("createTodo", { body: { title: "Send the Atlas press kit", dueDate: today, priority: 1 } });
    await user.client.call("createTodo", { body: { title: HOSTILE_TITLE, dueDate: today, priority: 2 } });
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 900 }, locale: "en-US", timezoneId: TIME_ZONE }));
  });

  afterAll(async () => {
    await app?.close();
  });

  it("changes the tier and the schedule, and they stay after a reload", async () => {
    await signInOnPage(page, user.apiKey, app.ts.server.url);
    await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    await openHeartbeat();
    await expect
      .poll(() => page.getByTestId("heartbeat-overview").textContent(), PATIENCE)
      .toContain("Off: the heartbeat runs only when you ask.");
    expect(await settings().getByRole("button", { name: "Save settings" }).isDisabled()).toBe(true);

    await settings()
      .getByRole("radio", { name: /Messages and actions/ })
      .check();
    await settings().getByLabel("Every").fill("2");
    await settings().getByLabel("Unit").selectOption("hours");
    await settings().getByLabel("Quiet hours, no runs").check();
    await settings().getByLabel("Quiet hours start").fill("21:30");
    await settings().getByLabel("Quiet hours end").fill("07:15");
    await settings()
      .getByLabel(/Time zone/)
      .selectOption(TIME_ZONE);
    expect(await settings().getByRole("radio", { name: "On a schedule" }).isChecked()).toBe(true);
    await expect.poll(() => settings().getByRole("status").textContent()).toBe("Unsaved changes");
    // The sidebar marks the edits not saved yet.
    expect(await sidebar().getByRole("img", { name: "unsaved changes" }).count()).toBe(1);

    await settings().getByRole("button", { name: "Save settings" }).click();
    await expect.poll(() => settings().getByRole("status").textContent(), PATIENCE).toBe("Saved");
    expect(await sidebar().getByRole("img", { name: "unsaved changes" }).count()).toBe(0);
    const { policy } = await user.client.call("getHeartbeatPolicy");
    expect(policy.tier).toBe("ACTIONS");
    expect(policy.schedule).toMatchObject({
      enabled: true,
      everyMinutes: 120,
      quietHours: { start: "21:30", end: "07:15" },
      timezone: TIME_ZONE,
    });
    await expect.poll(() => page.getByTestId("heartbeat-overview").textContent(), PATIENCE).toContain("Next run");

    await page.reload();
    await sidebar().getByRole("button", { name: "Heartbeat" }).click();
    await expect
      .poll(
        () =>
          settings()
            .getByRole("radio", { name: /Messages and actions/ })
            .isChecked(),
        PATIENCE,
      )
      .toBe(true);
    expect(await settings().getByLabel("Every").inputValue()).toBe("2");
    expect(await settings().getByLabel("Unit").inputValue()).toBe("hours");
    expect(await settings().getByLabel("Quiet hours start").inputValue()).toBe("21:30");
    expect(await settings().getByLabel("Quiet hours end").inputValue()).toBe("07:15");
    expect(
      await settings()
        .getByLabel(/Time zone/)
        .inputValue(),
    ).toBe(TIME_ZONE);
    expect(await page.getByTestId("heartbeat-overview").textContent()).toContain(
      "Runs every 2 hours, not from 21:30 to 07:15 (Europe/Paris).",
    );

    // A refusal is said in words, and the edit stays.
    await settings().getByLabel("Unit").selectOption("minutes");
    await settings().getByLabel("Every").fill("3");
    await settings().getByRole("button", { name: "Save settings" }).click();
    await expect.poll(() => settings().getByRole("alert").textContent()).toContain("every 5 minutes at the most often");
    expect(await settings().getByLabel("Every").inputValue()).toBe("3");
    await settings().getByRole("button", { name: "Undo changes" }).click();
    expect(await settings().getByLabel("Every").inputValue()).toBe("2");
    expect(pageErrors).toEqual([]);
  });

  it("edits the checklist, keeps the draft across sections, shows the limit, and saves it", async () => {
    await expect.poll(() => checklist().inputValue(), PATIENCE).toContain("Heartbeat checklist");
    expect(await page.getByText("This is the default checklist").count()).toBe(1);

    await checklist().fill(CHECKLIST);
    expect(await page.getByText(`${CHECKLIST.length} / 10,000 characters`).count()).toBe(1);
    // Another section and back: the text is still there, and marked unsaved meanwhile.
    await page.keyboard.press("Control+1");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Notes");
    expect(await sidebar().getByRole("img", { name: "unsaved changes" }).count()).toBe(1);
    await openHeartbeat();
    expect(await checklist().inputValue()).toBe(CHECKLIST);

    // Past the limit it says by how much, and cannot be saved.
    await checklist().fill("x".repeat(10_001));
    await page.getByText("10,001 / 10,000 characters (1 too many)").waitFor(WAIT);
    expect(await page.getByRole("button", { name: "Save checklist" }).isDisabled()).toBe(true);

    await checklist().fill(CHECKLIST);
    await page.getByRole("button", { name: "Save checklist" }).click();
    const editor = page.getByRole("region", { name: "Checklist" });
    await expect.poll(() => editor.getByRole("status").textContent(), PATIENCE).toBe("Saved");
    const saved = await user.client.call("getHeartbeatInstructions");
    expect(saved.isDefault).toBe(false);
    expect(saved.instructions).toContain("Remind me to water the office plants");
    expect(await checklist().inputValue()).toContain("Remind me to water the office plants");
    expect(await sidebar().getByRole("img", { name: "unsaved changes" }).count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it("a dry run says what it would do and writes nothing", async () => {
    const todosBefore = await todoTitles();
    await page.getByRole("button", { name: "Dry run", exact: true }).click();
    await expect.poll(() => lastResult().textContent(), PATIENCE).toContain("Dry run: nothing was written or sent.");
    const result = (await lastResult().textContent()) ?? "";
    expect(result).toContain("Would add the todo");
    expect(result).toContain("Water the office plants");
    // In words, not like a log: the message action says it was not sent, the time is a phrase.
    expect(result).toContain("Not sent: a dry run sends nothing");
    expect(result).not.toContain("Sent the message");
    expect(result).toMatch(/It took (under a second|\d+ seconds?)\./);
    expect(result).not.toMatch(/\(\d+\.\d s\)/);
    await history()
      .getByRole("button", { name: /Dry run: nothing sent/ })
      .waitFor(WAIT);

    // Nothing was written: no todo, no message, no conversation.
    expect(await todoTitles()).toEqual(todosBefore);
    const { conversations: listed } = await user.client.call("listConversations", { query: { view: "me" } });
    expect(listed ?? []).toEqual([]);
    const { runs } = await user.client.call("listHeartbeatRuns", { query: {} });
    expect(runs[0]).toMatchObject({ dryRun: true, delivered: false });
    expect(pageErrors).toEqual([]);
  });

  it("runs now: the run is in the history with its actions, and its message waits unread in the Heartbeat conversation", async () => {
    await page.getByRole("button", { name: "Run now", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Running the heartbeat…" }).waitFor(WAIT);
    await expect.poll(() => lastResult().textContent(), PATIENCE).toContain("Done: the message is in your Heartbeat conversation.");
    expect(await todoTitles()).toContain("Water the office plants");

    // The history lists it first; opened, it shows its message and its actions.
    const newest = history().getByRole("listitem").first();
    await expect.poll(() => newest.textContent(), PATIENCE).toContain("Sent");
    await newest.getByRole("button").first().click();
    const actions = newest.getByRole("list", { name: "Actions" });
    await expect.poll(() => actions.textContent(), PATIENCE).toContain("Looked at your todos");
    expect(await actions.textContent()).toContain("Created a todo");
    expect(await actions.textContent()).toContain("Sent the message");
    expect(await newest.textContent()).toContain("Send the Atlas press kit");

    // The message is unread: the Agent section says so, and (web mode) a toast.
    await expect.poll(() => agentBadge().getAttribute("aria-label"), PATIENCE).toBe("1 unread");
    const toast = page.getByRole("status", { name: "New message from your agent" });
    await toast.waitFor(WAIT);
    expect(await toast.textContent()).toContain("A message from your agent");

    await page.setViewportSize({ width: 1280, height: 1100 });
    await page.locator(".main-area").evaluate((area) => area.scrollTo(0, 0));
    await screenshot(page, "heartbeat");
    await page.setViewportSize({ width: 1280, height: 900 });

    // In the Agent section, the Heartbeat conversation carries the count; reading it clears every badge.
    await page.keyboard.press("Control+4");
    const thread = conversations().getByRole("button", { name: /Heartbeat/ });
    await expect.poll(() => thread.getByRole("img").getAttribute("aria-label"), PATIENCE).toBe("1 unread");
    await thread.click();
    const transcript = page.getByRole("log", { name: "Messages" });
    await expect.poll(() => transcript.textContent(), PATIENCE).toContain("Send the Atlas press kit");
    await expect.poll(() => thread.getByRole("img").count(), PATIENCE).toBe(0);
    await expect.poll(() => agentBadge().count(), PATIENCE).toBe(0);
    await expect.poll(() => toast.count(), PATIENCE).toBe(0);
    const { conversations: listed } = await user.client.call("listConversations", { query: { view: "me" } });
    expect(listed?.[0]?.unreadCount).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it("shows markup in a run's message and actions as text, and runs nothing", async () => {
    // The hostile todo is in the Heartbeat conversation, in the result, and in the actions' details.
    const transcript = page.getByRole("log", { name: "Messages" });
    expect(await transcript.textContent()).toContain(HOSTILE_TITLE);
    expect(await transcript.locator("img").count()).toBe(0);

    await openHeartbeat();
    expect(await lastResult().textContent()).toContain(HOSTILE_TITLE);
    const newest = history().getByRole("listitem").first();
    if ((await newest.getByRole("list", { name: "Actions" }).count()) === 0) await newest.getByRole("button").first().click();
    for (const details of await newest.locator("details").all()) await details.locator("summary").click();
    await expect
      .poll(() => newest.locator("pre").allTextContents(), PATIENCE)
      .toEqual(expect.arrayContaining([expect.stringContaining("Review the <b>Atlas</b> budget")]));
    expect(await page.locator(".heartbeat-view img, .heartbeat-view b").count()).toBe(0);
    // Give a stray handler a moment to show itself.
    await page.waitForTimeout(300);
    expect(await pwned()).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });

  it("says the heartbeat needs the server while it is offline, keeps the checklist typed meanwhile, and saves it once back", async () => {
    await app.ts.server.close();
    await expect.poll(syncStatus, PATIENCE).toMatch(/^Offline/);
    await offlineNotice().waitFor(WAIT);
    expect(await page.getByRole("button", { name: "Run now", exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Dry run", exact: true }).isDisabled()).toBe(true);
    // The last history stays on screen.
    expect(await history().getByRole("listitem").count()).toBeGreaterThan(0);

    const offlineText = `${CHECKLIST}- Written while offline\n`;
    await checklist().fill(offlineText);
    expect(await page.getByRole("button", { name: "Save checklist" }).isDisabled()).toBe(true);
    await page.keyboard.press("Control+2");
    await openHeartbeat();
    expect(await checklist().inputValue()).toBe(offlineText);

    await app.ts.restart();
    await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    await expect.poll(() => offlineNotice().count(), PATIENCE).toBe(0);
    await page.getByRole("button", { name: "Save checklist" }).click();
    const editor = page.getByRole("region", { name: "Checklist" });
    await expect.poll(() => editor.getByRole("status").textContent(), PATIENCE).toBe("Saved");
    expect((await user.client.call("getHeartbeatInstructions")).instructions).toContain("Written while offline");
    expect(pageErrors).toEqual([]);
  });

  it("a message that repeats the last one is kept back, and the run says so in words, not like a log", async () => {
    const runNow = async () => {
      const before = (await user.client.call("listHeartbeatRuns", { query: {} })).runs.length;
      await page.getByRole("button", { name: "Run now", exact: true }).click();
      await expect
        .poll(async () => {
          const { runs } = await user.client.call("listHeartbeatRuns", { query: {} });
          return runs.length > before && runs[0]?.status !== "running";
        }, PATIENCE)
        .toBe(true);
    };
    // Twice with nothing changed between: the second says the same as the first (or as the one before it).
    await runNow();
    await runNow();
    const { runs } = await user.client.call("listHeartbeatRuns", { query: {} });
    expect(runs[0]).toMatchObject({ suppressed: true, delivered: false });
    await expect.poll(() => lastResult().textContent(), PATIENCE).toContain("nothing was sent");
    const result = (await lastResult().textContent()) ?? "";
    expect(result).toMatch(/Not sent: (nearly )?the same as the \d{1,2}:\d{2} [AP]M message/);
    expect(result).not.toContain("similarity");
    expect(result).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
    expect(result).not.toContain("Sent the message");
    expect(pageErrors).toEqual([]);
  });
});
