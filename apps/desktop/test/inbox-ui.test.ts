import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, freePort, openSection, screenshot, signInOnPage } from "./browser-harness";

/** Calls go page → host → server and back; arrivals come over the host's stream: be patient. */
const PATIENCE = { timeout: 30_000, intervals: [100, 250, 500, 1000] };

/** Markup in a message: shown as text, it must never become an element or run. */
const MARKUP = `Lunch on Friday? <img src=x onerror="window.__inboxPwned=1"><b>bold</b>`;

describe.skipIf(chromiumMissing("inbox"))("the Inbox section in web mode against a real server", () => {
  let app: BrowserApp;
  let ada: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let page: Page;
  let pageErrors: string[];

  const list = () => page.getByRole("complementary", { name: "Conversations" });
  const pane = () => page.getByRole("region", { name: "Conversation" });
  const row = (title: string) => list().getByRole("button", { name: title });
  const navButton = () => page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Inbox" });
  const messages = () => pane().getByRole("list", { name: "Messages" });

  async function friends(a: TestUser, b: TestUser) {
    await a.client.call("networkRequest", { body: { to: b.username } });
    await b.client.call("networkRequest", { body: { to: a.username } });
  }
  /** One user's conversations (with their newest messages) as the server has them. */
  const serverConversations = async (user: TestUser, view: "coo" | "group") =>
    (await user.client.call("listConversations", { query: { view, limit: 20, messages: 20 } })).conversations ?? [];

  beforeAll(async () => {
    // A fixed port: the offline test stops the server and starts it again at the same address.
    app = await startBrowserApp({ name: "inbox-ui", server: { port: await freePort() }, host: { version: await readDesktopVersion() } });
    ada = await app.ts.addUser("ada");
    bob = await app.ts.addUser("bob");
    carol = await app.ts.addUser("carol");
    await friends(ada, bob);
    await friends(ada, carol);
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 860 }, locale: "en-US" }));
  });

  afterAll(async () => {
    await app?.close();
  });

  it("opens with Mod+9 and says there is nothing yet", async () => {
    await signInOnPage(page, ada.apiKey, app.ts.server.url);
    await expect.poll(() => page.getByTestId("sync-status").textContent(), PATIENCE).toBe("Synced");
    await page.keyboard.press("Control+9");
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Inbox");
    await expect.poll(() => list().textContent(), PATIENCE).toContain("No conversations yet.");
    expect(pageErrors).toEqual([]);
  });

  it("shows a message another user sends live, with its unread count, a badge and a toast; Markdown reads as in the Agent, markup stays text", async () => {
    // Somewhere else in the app: the toast and the badge find the owner there.
    await page.keyboard.press("Control+1");
    await bob.client.call("agentMessage", { body: { to: ada.username, message: `${MARKUP}\n\nBring the **Q1 plan**.` } });

    const toast = page.getByRole("status", { name: "New message" });
    await expect.poll(() => toast.count(), PATIENCE).toBe(1);
    expect(await toast.textContent()).toContain("Lunch on Friday? <img");
    await expect.poll(() => navButton().getByRole("img", { name: "1 unread" }).count(), PATIENCE).toBe(1);
    await toast.getByRole("button", { name: "Open" }).click();
    await expect.poll(() => page.locator("#section-title").textContent()).toBe("Inbox");

    await expect.poll(() => messages().textContent(), PATIENCE).toContain(MARKUP);
    expect(await messages().locator("img, b").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __inboxPwned?: number }).__inboxPwned)).toBeUndefined();
    // The same Markdown reading as the Agent section: bold is bold, not asterisks.
    expect(await messages().locator("strong").allTextContents()).toEqual(["Q1 plan"]);
    expect(await messages().textContent()).not.toContain("**");
    expect(await messages().textContent()).toMatch(/bob's agent/i);
    // On screen means read: the server agrees, and the badge goes.
    await expect.poll(async () => (await serverConversations(ada, "coo"))[0]?.unreadCount, PATIENCE).toBe(0);
    await expect.poll(() => navButton().getByRole("img").count(), PATIENCE).toBe(0);
    expect(await toast.count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it("counts a message that arrives in another conversation as unread in the list", async () => {
    await carol.client.call("agentMessage", { body: { to: ada.username, message: "Are the slides ready?" } });
    await expect.poll(() => row("carol").getByRole("img", { name: "1 unread" }).count(), PATIENCE).toBe(1);
    expect(await row("carol").textContent()).toContain("Are the slides ready?");
    // The conversation on screen is Bob's: his row has nothing unread.
    expect(await row("bob").getByRole("img").count()).toBe(0);
    const toast = page.getByRole("status", { name: "New message" });
    await expect.poll(() => toast.textContent(), PATIENCE).toContain("Are the slides ready?");
    await toast.getByRole("button", { name: "Dismiss" }).click();
  });

  it("replies as a person: the server stores senderType human and the other user reads it", async () => {
    await pane().getByRole("textbox", { name: "Reply" }).fill("See you at noon.");
    await pane().getByRole("button", { name: "Send" }).click();
    await expect.poll(() => pane().getByRole("status").textContent(), PATIENCE).toBe("Sent.");
    expect(await pane().getByRole("textbox", { name: "Reply" }).inputValue()).toBe("");
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("See you at noon.");

    const [bobsView] = await serverConversations(bob, "coo");
    const reply = bobsView?.messages.at(-1);
    expect(reply?.content).toBe("See you at noon.");
    expect(reply?.senderType).toBe("human");
    expect(reply?.senderId).toBe(String(ada.userId));
    expect(bobsView?.unreadCount).toBe(1);
  });

  it("keeps a draft when switching conversations and sections", async () => {
    await pane().getByRole("textbox", { name: "Reply" }).fill("Half a thought");
    await row("carol").click();
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("Are the slides ready?");
    expect(await pane().getByRole("textbox", { name: "Reply" }).inputValue()).toBe("");
    expect(await row("bob").textContent()).toContain("Draft");
    await page.keyboard.press("Control+2");
    await page.keyboard.press("Control+9");
    await row("bob").click();
    await expect.poll(() => pane().getByRole("textbox", { name: "Reply" }).inputValue(), PATIENCE).toBe("Half a thought");
  });

  it("starts a message to a contact and creates a group that both members read", async () => {
    // Carol and Ada already talk: a new message to her is written as Ada, into that conversation.
    await list().getByRole("button", { name: "New message" }).click();
    const form = page.getByRole("form", { name: "New message" });
    await expect.poll(() => form.getByLabel("To").locator("option").count(), PATIENCE).toBeGreaterThan(2);
    await form.getByLabel("To").selectOption("carol");
    await form.getByLabel("Message").fill("Almost: tonight.");
    await form.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("Almost: tonight.");
    const carols = await serverConversations(carol, "coo");
    expect(carols[0]?.messages.at(-1)).toMatchObject({ content: "Almost: tonight.", senderType: "human", senderId: String(ada.userId) });

    await list().getByRole("button", { name: "New group" }).click();
    const groupForm = page.getByRole("form", { name: "New group" });
    await groupForm.getByLabel("Name", { exact: true }).fill("Launch crew");
    await expect.poll(() => groupForm.getByRole("checkbox").count(), PATIENCE).toBe(2);
    await groupForm.getByRole("checkbox", { name: /bob/ }).check();
    await groupForm.getByRole("checkbox", { name: /carol/ }).check();
    await groupForm.getByRole("button", { name: "Create group" }).click();
    await expect.poll(() => pane().getByRole("heading", { name: "Launch crew" }).count(), PATIENCE).toBe(1);
    await pane().getByRole("textbox", { name: "Reply" }).fill("Kick-off on Monday.");
    await pane().getByRole("button", { name: "Send" }).click();
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("Kick-off on Monday.");

    // Bob writes back into the group: it arrives live, named by the group.
    const [bobsGroup] = await serverConversations(bob, "group");
    expect(bobsGroup?.messages.at(-1)).toMatchObject({ content: "Kick-off on Monday.", senderType: "human" });
    await bob.client.call("postConversationMessage", {
      params: { id: bobsGroup?.conversationId ?? 0 },
      body: { content: "I'll bring the plan." },
    });
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("I'll bring the plan.");
    await list().getByRole("button", { name: "Groups" }).click();
    await expect.poll(() => list().getByRole("listitem").count(), PATIENCE).toBe(1);
    expect(await list().textContent()).toContain("Launch crew (group)");
    await list().getByRole("button", { name: "All" }).click();
    await expect.poll(() => list().getByRole("listitem").count(), PATIENCE).toBe(3);
    // Bob's group message was read on screen: nothing is left unread.
    await expect.poll(() => navButton().getByRole("img").count(), PATIENCE).toBe(0);
    await screenshot(page, "inbox");

    // Leaving the group, asked first: it leaves Ada's list, and Bob keeps it.
    await row("Launch crew").click();
    await pane().getByRole("button", { name: "Leave group" }).click();
    await pane().getByRole("alertdialog").getByRole("button", { name: "Leave group" }).click();
    await expect.poll(() => list().getByRole("listitem").count(), PATIENCE).toBe(2);
    expect(await pane().textContent()).toContain("Choose a conversation");
    expect((await ada.client.call("listGroups")).groups).toEqual([]);
    expect((await bob.client.call("listGroups")).groups).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });

  it("keeps unsent replies and a new message across a reload and a restart, until they are sent", async () => {
    const replyBox = () => pane().getByRole("textbox", { name: "Reply" });
    const newMessage = () => page.getByRole("form", { name: "New message" }).getByLabel("Message");
    // Bob's reply has waited since an earlier test; Carol's and a new message join it.
    await row("carol").click();
    await replyBox().fill("The slides are");
    await list().getByRole("button", { name: "New message" }).click();
    await newMessage().fill("A thought for later");

    await page.reload();
    await openSection(page, "Inbox");
    await expect.poll(() => row("bob").textContent(), PATIENCE).toContain("Draft");
    expect(await row("carol").textContent()).toContain("Draft");
    await row("bob").click();
    await expect.poll(() => replyBox().inputValue(), PATIENCE).toBe("Half a thought");

    // The app quits and starts again (a new host on the same data): they are still there.
    await page.close();
    await app.restart();
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 860 }, locale: "en-US" }));
    await openSection(page, "Inbox");
    await row("carol").click();
    await expect.poll(() => replyBox().inputValue(), PATIENCE).toBe("The slides are");
    await list().getByRole("button", { name: "New message" }).click();
    await expect.poll(() => newMessage().inputValue(), PATIENCE).toBe("A thought for later");
    await newMessage().fill("");

    // Sent, a draft is gone for good.
    await row("carol").click();
    await replyBox().press("End");
    await replyBox().press("Shift+Enter");
    await page.keyboard.type("ready.");
    await replyBox().press("Enter");
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("ready.");
    expect(await replyBox().inputValue()).toBe("");
    await page.reload();
    await openSection(page, "Inbox");
    await expect.poll(() => row("bob").textContent(), PATIENCE).toContain("Draft");
    expect(await row("carol").textContent()).not.toContain("Draft");
    await row("carol").click();
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("ready.");
    expect(await replyBox().inputValue()).toBe("");
    expect(pageErrors).toEqual([]);
  });

  it("sends with Enter and starts a new line with Shift+Enter, as the Agent's box does, and says so under the box", async () => {
    const replyBox = pane().getByRole("textbox", { name: "Reply" });
    const hint = page.locator(`#${await replyBox.getAttribute("aria-describedby")}`);
    expect(await hint.textContent()).toBe("Enter sends · Shift+Enter new line");
    expect(await hint.isVisible()).toBe(true);
    // Carol's reply above went as two lines, by Enter alone.
    const [carolsView] = await serverConversations(carol, "coo");
    expect(carolsView?.messages.at(-1)?.content).toBe("The slides are\nready.");
    expect(carolsView?.messages.filter((message) => message.content.startsWith("The slides are"))).toHaveLength(1);
    // A new message follows the same rule, and says it too.
    await list().getByRole("button", { name: "New message" }).click();
    const form = page.getByRole("form", { name: "New message" });
    const box = form.getByLabel("Message");
    expect(await page.locator(`#${await box.getAttribute("aria-describedby")}`).textContent()).toBe("Enter sends · Shift+Enter new line");
    await expect.poll(() => form.getByLabel("To").locator("option").count(), PATIENCE).toBeGreaterThan(2);
    await form.getByLabel("To").selectOption("carol");
    await box.fill("One more");
    await box.press("Shift+Enter");
    await page.keyboard.type("thing.");
    expect(await box.inputValue()).toBe("One more\nthing.");
    await box.press("Enter");
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("thing.");
    expect((await serverConversations(carol, "coo"))[0]?.messages.at(-1)?.content).toBe("One more\nthing.");
    expect(pageErrors).toEqual([]);
  });

  it("says in words why a reply was not sent, and keeps its text", async () => {
    await bob.client.call("networkRemoveContact", { params: { userId: String(ada.userId) } });
    await row("bob").click();
    const box = pane().getByRole("textbox", { name: "Reply" });
    await expect.poll(() => box.inputValue(), PATIENCE).toBe("Half a thought");
    await box.fill("Are we still on?");
    await pane().getByRole("button", { name: "Send" }).click();
    await expect
      .poll(() => pane().getByRole("alert").textContent(), PATIENCE)
      .toBe("Not sent: You are not connected with this person. You can write to people once you are contacts.");
    expect(await box.inputValue()).toBe("Are we still on?");
    // The failed call reached the host, which answered it with an error: the browser logs that as a 500.
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });

  it("says in words that a reply cannot go while the server is down, keeps it, and sends it once the server is back", async () => {
    await row("carol").click();
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("Almost: tonight.");
    await app.ts.server.close();
    const box = pane().getByRole("textbox", { name: "Reply" });
    await box.fill("Sent from a train.");
    await pane().getByRole("button", { name: "Send" }).click();
    await expect
      .poll(() => pane().getByRole("alert").textContent(), PATIENCE)
      .toBe(
        "Not sent: Can't reach the server right now. Messages are kept on the server; try again once you are back online. What you typed is kept.",
      );
    expect(await box.inputValue()).toBe("Sent from a train.");
    await expect.poll(() => list().getByRole("status").textContent(), { ...PATIENCE, timeout: 60_000 }).toContain("can't be reached");
    // What was shown stays on screen.
    expect(await list().getByRole("listitem").count()).toBe(2);

    await app.ts.restart();
    await expect.poll(() => page.getByTestId("sync-status").textContent(), { ...PATIENCE, timeout: 60_000 }).toBe("Synced");
    await pane().getByRole("button", { name: "Send" }).click();
    await expect.poll(() => messages().textContent(), PATIENCE).toContain("Sent from a train.");
    expect(await box.inputValue()).toBe("");
    const carols = await serverConversations(carol, "coo");
    expect(carols[0]?.messages.filter((message) => message.content === "Sent from a train.")).toHaveLength(1);
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  }, 120_000);

  it("lists message requests from people not connected, and accepts, blocks and ignores them with words for each", async () => {
    const [dan, eve, fay] = [await app.ts.addUser("dan"), await app.ts.addUser("eve"), await app.ts.addUser("fay")];
    const STRANGER = `Hi Ada, we met at the meetup <img src=x onerror="window.__inboxPwned=2">`;
    await dan.client.call("agentMessage", { body: { to: ada.username, message: STRANGER } });
    await eve.client.call("agentMessage", { body: { to: ada.username, message: "Cheap watches" } });
    await fay.client.call("agentMessage", { body: { to: ada.username, message: "Quick question" } });
    // Coming to the Inbox reads the requests.
    await page.keyboard.press("Control+1");
    await page.keyboard.press("Control+9");
    const requests = page.getByRole("region", { name: "Requests" });
    const request = (name: string) => requests.getByRole("listitem", { name: `Request from ${name}` });
    await expect.poll(() => requests.getByRole("listitem", { name: /^Request from / }).count(), PATIENCE).toBe(3);
    expect(await request(dan.username).textContent()).toContain(STRANGER);
    expect(await requests.locator("img").count()).toBe(0);

    await request(dan.username).getByRole("button", { name: "Accept" }).click();
    await expect.poll(() => requests.getByRole("status").textContent(), PATIENCE).toMatch(/^Accepted: You and dan\S* are now contacts/);
    await expect.poll(() => messages().textContent(), PATIENCE).toContain(STRANGER);
    expect(await page.evaluate(() => (window as unknown as { __inboxPwned?: number }).__inboxPwned)).toBeUndefined();
    const contacts = (await ada.client.call("networkOverview")).network.contacts.map((c) => c.username);
    expect(contacts).toContain(dan.username);

    await request(eve.username).getByRole("button", { name: "Block" }).click();
    await requests.getByRole("alertdialog").getByRole("button", { name: "Block" }).click();
    await expect.poll(() => requests.getByRole("status").textContent(), PATIENCE).toMatch(/^Blocked: /);
    await eve.client.call("agentMessage", { body: { to: ada.username, message: "Still cheap" } });
    expect((await ada.client.call("listMessageRequests", { query: { limit: 50 } })).requests.map((r) => r.from.username)).toEqual([
      fay.username,
    ]);

    // Answered on another device between the click and this device's answer (held at the host's
    // door, so the list cannot be read again first): the refusal in words, and the request goes.
    const fays = (await ada.client.call("listMessageRequests", { query: { limit: 50 } })).requests[0]?.id as number;
    await page.route("**/__host/answerInboxRequest", async (route) => {
      await ada.client.call("ignoreMessageRequest", { params: { id: fays } });
      await route.continue();
    });
    await request(fay.username).getByRole("button", { name: "Ignore" }).click();
    await expect
      .poll(() => requests.getByRole("alert").textContent(), PATIENCE)
      .toBe("Not done: This request was already answered, perhaps on another device.");
    await expect.poll(() => request(fay.username).count(), PATIENCE).toBe(0);
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });
});
