import { todayIn } from "@tandem/core/dates";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeProvider, startFakeOpenAI } from "../../server/test/fakes/fake-openai";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, freePort, screenshot, signInOnPage } from "./browser-harness";

/** Replies stream page → host → server and back, and replication backs off while the server is down: be patient. */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };
const WAIT = { timeout: 60_000 };
const TIME_ZONE = "Europe/Paris";
/** A title that is markup: every view must show it as these characters, and nothing may run. */
const HOSTILE_TITLE = `<img src=x onerror="window.__pwned = 1">Atlas review`;

describe.skipIf(chromiumMissing("agent"))("the Agent and Today sections in web mode against a real server", () => {
  let app: BrowserApp;
  let user: TestUser;
  /** A second server whose model (the fake OpenAI-compatible provider) stalls mid-answer, for Stop. */
  let fake: FakeProvider;
  let stalling: TestServer;
  let page: Page;
  let pageErrors: string[];

  const messageBox = () => page.getByRole("textbox", { name: "Message" });
  const transcript = () => page.getByRole("log", { name: "Messages" });
  const conversations = () => page.getByRole("navigation", { name: "Conversations" });
  const agentAnswers = () => transcript().getByRole("article", { name: "Agent" });
  const chipLabels = () => transcript().locator(".tool-chip-label").allTextContents();
  const syncStatus = () => page.getByTestId("sync-status").textContent();
  const offlineNotice = () => page.getByRole("status").filter({ hasText: "The agent needs the server" });
  const pwned = () => page.evaluate(() => (window as { __pwned?: unknown }).__pwned);

  const ask = async (question: string) => {
    await messageBox().fill(question);
    await messageBox().press("Enter");
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI({ defaultReply: { stall: true, textBefore: "Let me look at the whole plan first" } });
    // A fixed port: the offline test stops the server and starts it again at the same address.
    const [started, stallingServer] = await Promise.all([
      startBrowserApp({ name: "agent-ui", server: { port: await freePort() }, host: { version: await readDesktopVersion() } }),
      startTestServer({ modelProvider: "openai-compatible", modelBaseUrl: fake.baseUrl, model: "fake-model" }),
    ]);
    app = started;
    stalling = stallingServer;
    user = await app.ts.addUser("ada");
    await user.client.call("createNote", {
      body: {
        title: "Project Atlas",
        content: "# Atlas\n\nThe Atlas launch is planned for March 3. Marketing owns the launch checklist.",
      },
    });
    await user.client.call("createTodo", { body: { title: "Send the Atlas press kit", dueDate: todayIn(TIME_ZONE), priority: 1 } });
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 800 }, locale: "en-US", timezoneId: TIME_ZONE }));
  });

  afterAll(async () => {
    await app?.close();
    await stalling?.stop();
    await fake?.close();
  });

  it("answers from the notes as it streams, with a chip per tool call, opened with Ctrl+4", async () => {
    await signInOnPage(page, user.apiKey, app.ts.server.url);
    await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    await page.keyboard.press("Control+4");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Agent");

    await ask("When is the Atlas launch?");
    await expect.poll(() => agentAnswers().last().textContent(), PATIENCE).toContain("March 3");
    // The local agent searched, then read the best notes; each call got its chip, settled.
    await expect.poll(chipLabels, PATIENCE).toEqual(expect.arrayContaining(["Searched notes", "Read a note"]));
    expect(await transcript().locator('.tool-chip[data-state="running"]').count()).toBe(0);
    // Sent: the box is empty again, and the conversation heads the list.
    expect(await messageBox().inputValue()).toBe("");
    await conversations()
      .getByRole("button", { name: /When is the Atlas launch\?/ })
      .waitFor(WAIT);
    await expect.poll(() => page.getByRole("button", { name: "Send" }).isVisible()).toBe(true);
    await screenshot(page, "agent");
    expect(pageErrors).toEqual([]);
  });

  it("lists the conversation after a reload and loads its messages", async () => {
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Agent", exact: true }).click();
    await conversations()
      .getByRole("button", { name: /When is the Atlas launch\?/ })
      .click();
    await expect.poll(() => transcript().textContent(), PATIENCE).toContain("When is the Atlas launch?");
    expect(await agentAnswers().last().textContent()).toContain("March 3");
    expect(await chipLabels()).toEqual(expect.arrayContaining(["Searched notes", "Read a note"]));
    expect(await page.locator(".chat-header h3").textContent()).toContain("When is the Atlas launch?");
    expect(pageErrors).toEqual([]);
  });

  it("keeps an unsent question per conversation across a reload, says how to send it, and forgets it once erased", async () => {
    const openAgent = () => page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Agent", exact: true }).click();
    const hint = async () => page.locator(`#${await messageBox().getAttribute("aria-describedby")}`);
    // The conversation opened by the test before is on screen.
    await messageBox().fill("And who owns the checklist?");
    await conversations().getByRole("button", { name: "New chat" }).click();
    expect(await messageBox().inputValue()).toBe("");
    await messageBox().fill("A question for a new chat");
    await messageBox().press("Shift+Enter");
    await page.keyboard.type("on two lines");
    expect(await (await hint()).textContent()).toBe("Enter sends · Shift+Enter new line");

    await page.reload();
    await openAgent();
    // A reload opens a new chat, with its own draft; the conversation has its own.
    await expect.poll(() => messageBox().inputValue(), PATIENCE).toBe("A question for a new chat\non two lines");
    await conversations()
      .getByRole("button", { name: /When is the Atlas launch\?/ })
      .click();
    await expect.poll(() => transcript().textContent(), PATIENCE).toContain("March 3");
    expect(await messageBox().inputValue()).toBe("And who owns the checklist?");
    expect(await (await hint()).isVisible()).toBe(true);

    // Erased, the new chat's draft is gone after a reload too.
    await conversations().getByRole("button", { name: "New chat" }).click();
    await messageBox().fill("");
    await page.reload();
    await openAgent();
    await conversations()
      .getByRole("button", { name: /When is the Atlas launch\?/ })
      .click();
    await expect.poll(() => messageBox().inputValue(), PATIENCE).toBe("And who owns the checklist?");
    await conversations().getByRole("button", { name: "New chat" }).click();
    expect(await messageBox().inputValue()).toBe("");
    await conversations()
      .getByRole("button", { name: /When is the Atlas launch\?/ })
      .click();
    await expect.poll(() => transcript().textContent(), PATIENCE).toContain("March 3");
    expect(pageErrors).toEqual([]);
  });

  it("keeps what was typed when the server refuses it, and says why in words", async () => {
    // The open conversation goes away behind the page's back: continuing it is a 404.
    const { conversations: listed } = await user.client.call("listConversations", { query: { view: "me" } });
    const id = listed?.[0]?.conversationId ?? -1;
    await user.client.call("deleteConversation", { params: { id } });

    await ask("Who owns the checklist?");
    await expect.poll(() => page.getByRole("alert").first().textContent(), PATIENCE).toMatch(/not found/i);
    expect(await messageBox().inputValue()).toBe("Who owns the checklist?");
    // A new chat takes the same text, and this time it is answered.
    await conversations().getByRole("button", { name: "New chat" }).click();
    await messageBox().press("Enter");
    await expect.poll(() => agentAnswers().last().textContent(), PATIENCE).toContain("Marketing");
    expect(await messageBox().inputValue()).toBe("");
    // The refusal reached the page as the host API's error answer, which the browser logs; nothing else may have.
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
    pageErrors.length = 0;
  });

  it("deletes a conversation once asked to confirm", async () => {
    await conversations()
      .getByRole("button", { name: /Who owns the checklist\?/ })
      .waitFor(WAIT);
    await page.getByRole("button", { name: "Delete conversation" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Delete this conversation and its messages?" });
    await confirm.getByRole("button", { name: "Delete conversation" }).click();
    await expect
      .poll(
        () =>
          conversations()
            .getByRole("button", { name: /Who owns the checklist\?/ })
            .count(),
        PATIENCE,
      )
      .toBe(0);
    expect(await page.locator(".chat-header h3").textContent()).toBe("New chat");
    const { conversations: left } = await user.client.call("listConversations", { query: { view: "me" } });
    expect(left).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("writes a briefing from the todos and notes: five sections, suggestions, next steps and the four quadrants", async () => {
    await page.keyboard.press("Control+3");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Today");
    await page.getByText("No briefing yet.").waitFor(WAIT);
    // A note that opens with a heading: the briefing gives a sentence of it, not the heading.
    await user.client.call("createNote", {
      body: { title: "Team kickoff", content: "# Kickoff\n\nWe start on Monday with everyone in the big room." },
    });
    await expect
      .poll(async () => (await user.client.call("notesSummary", { query: { limit: 5 } })).notesSummary, PATIENCE)
      .toContain("Team kickoff");

    await page.getByRole("button", { name: "New briefing" }).click();
    const section = (name: string) => page.getByRole("region", { name, exact: true });
    for (const name of ["Where things stand", "Todos", "Calendar", "Notes", "Email needing attention"]) await section(name).waitFor(WAIT);
    expect(await section("Todos").textContent()).toContain("Send the Atlas press kit");
    const notes = (await section("Notes").textContent()) ?? "";
    expect(notes).toContain("Project Atlas");
    expect(notes).toContain("Team kickoff");
    expect(notes).toContain("We start on Monday with everyone in the big room.");
    expect(notes).not.toMatch(/· Kickoff\b/);
    // When a note changed: the server stores the instant; the page says it relative to now, the full time on hover.
    const time = section("Notes").locator("time").first();
    expect(await time.textContent()).toMatch(/^(just now|\d+ minutes? ago)$/);
    expect(Date.parse((await time.getAttribute("datetime")) ?? "")).not.toBeNaN();
    const [stored] = (await user.client.call("listBriefings", { query: {} })).briefings;
    expect(stored?.notesSummary).toContain("<time>");
    expect(stored?.notesSummary).not.toMatch(/just now|\bago\b/);

    const quadrant = (name: string) => section("Priorities").getByRole("region", { name, exact: true });
    await quadrant("Urgent and important").waitFor(WAIT);
    for (const name of ["Important, not urgent", "Urgent, not important", "Neither"]) await quadrant(name).waitFor(WAIT);
    expect(await quadrant("Urgent and important").textContent()).toContain("Send the Atlas press kit");
    await expect.poll(() => section("Next steps").getByRole("listitem").count(), PATIENCE).toBeGreaterThan(0);

    // Tall enough to show the whole briefing, quadrants included.
    await page.setViewportSize({ width: 1280, height: 1000 });
    await screenshot(page, "today");
    await page.setViewportSize({ width: 1280, height: 800 });

    // The latest briefing is the server's: a reload shows it again.
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Today" }).click();
    await expect.poll(() => section("Todos").textContent(), PATIENCE).toContain("Send the Atlas press kit");
    expect(pageErrors).toEqual([]);
  });

  it("shows a note title made of markup as text, in an answer and in a briefing, and runs nothing", async () => {
    await user.client.call("createNote", { body: { title: HOSTILE_TITLE, content: "The Atlas review is on Friday with the whole team." } });
    await page.keyboard.press("Control+4");
    await ask("When is the Atlas review?");
    await expect.poll(() => agentAnswers().last().textContent(), PATIENCE).toContain("Friday");
    expect(await agentAnswers().last().textContent()).toContain(HOSTILE_TITLE);
    expect(await transcript().locator("img").count()).toBe(0);

    await page.keyboard.press("Control+3");
    await page.getByRole("button", { name: "New briefing" }).click();
    const notes = page.getByRole("region", { name: "Notes", exact: true });
    await expect.poll(() => notes.textContent(), PATIENCE).toContain(HOSTILE_TITLE);
    expect(await page.locator(".briefing img").count()).toBe(0);
    // Give a stray handler a moment to show itself.
    await page.waitForTimeout(300);
    expect(await pwned()).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });

  it("says the agent needs the server while it is offline, keeps the draft, and recovers", async () => {
    await page.keyboard.press("Control+4");
    await messageBox().fill("Draft written offline");
    await app.ts.server.close();
    await expect.poll(syncStatus, PATIENCE).toMatch(/^Offline/);
    await offlineNotice().waitFor(WAIT);
    expect(await page.getByRole("button", { name: "Send" }).isDisabled()).toBe(true);
    await messageBox().press("Enter");
    expect(await messageBox().inputValue()).toBe("Draft written offline");

    // Today keeps the last briefing and says why no new one can be written.
    await page.keyboard.press("Control+3");
    await offlineNotice().waitFor(WAIT);
    expect(await page.getByRole("button", { name: "New briefing" }).isDisabled()).toBe(true);
    expect(await page.getByRole("region", { name: "Todos", exact: true }).textContent()).toContain("Send the Atlas press kit");

    // Back to the agent: the draft is still there.
    await page.keyboard.press("Control+4");
    expect(await messageBox().inputValue()).toBe("Draft written offline");

    // The same server, at the same address: the notice goes, and the draft is sent.
    await app.ts.restart();
    await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    await expect.poll(() => offlineNotice().count(), PATIENCE).toBe(0);
    await messageBox().press("Enter");
    await expect.poll(() => messageBox().inputValue(), PATIENCE).toBe("");
    await expect.poll(() => agentAnswers().last().getAttribute("aria-busy"), PATIENCE).toBe("false");
    expect(pageErrors).toEqual([]);
  });

  // Signing in again, a stalled reply and a reload: on a loaded CI machine this takes longer than the default minute.
  it("stops a reply: what came so far stays, marked stopped, and the server keeps it as incomplete", async () => {
    const stella = await stalling.addUser("stella");
    await page.getByRole("button", { name: "Sign out" }).click();
    await signInOnPage(page, stella.apiKey, stalling.server.url);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Agent", exact: true }).click();
    // Until the new session is online the view rightly refuses to send; on a slow machine that takes a while.
    await expect.poll(syncStatus, PATIENCE).toBe("Synced");
    await expect.poll(() => offlineNotice().count(), PATIENCE).toBe(0);

    await ask("Plan my week");
    await expect.poll(() => agentAnswers().last().textContent(), PATIENCE).toContain("whole plan");
    // While it streams, Stop stands where Send was.
    expect(await page.getByRole("button", { name: "Send" }).count()).toBe(0);
    await page.getByRole("button", { name: "Stop" }).click();
    await expect.poll(() => agentAnswers().last().textContent(), PATIENCE).toContain("Stopped.");
    await page.getByRole("button", { name: "Send" }).waitFor(WAIT);

    // The server kept the partial answer, marked incomplete; the page shows it so after a reload.
    await expect
      .poll(async () => {
        const { conversations: listed } = await stella.client.call("listConversations", { query: { view: "me" } });
        return listed?.[0]?.messages.at(-1)?.status;
      }, PATIENCE)
      .toBe("incomplete");
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Agent", exact: true }).click();
    await conversations()
      .getByRole("button", { name: /Plan my week/ })
      .click();
    await expect.poll(() => agentAnswers().last().textContent(), PATIENCE).toContain("Stopped: this answer is incomplete.");
    expect(await agentAnswers().last().textContent()).toContain("Let me look at the whole plan first");
    expect(pageErrors).toEqual([]);
  }, 180_000);
});
