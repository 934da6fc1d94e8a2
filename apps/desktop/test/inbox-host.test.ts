import { rm } from "node:fs/promises";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Host } from "../src/host/host";
import { createInboxFacet, INBOX_OFFLINE, INBOX_UNSUPPORTED } from "../src/host/inbox/inbox";
import { inboxConversation } from "../src/host/inbox/inbox-read";
import { arrivalOf } from "../src/host/inbox/inbox-watch";
import { sessionOf, signInAs, startTestHost, tempDir, waitFor } from "./host-harness";

describe("reading the user channel's events", () => {
  const event = (type: string, data: Record<string, unknown>) => ({ cursor: "7", type, createdAt: "2026-11-25T08:00:00.000Z", data });
  const message = {
    id: 88,
    conversationId: 12,
    senderLabel: "Bob's agent",
    content: "Lunch\non   Friday?",
    createdAt: "2026-11-25T08:00:00.000Z",
  };

  it("turns a message event into an arrival, one line, and names the group", () => {
    expect(arrivalOf(event("message", { conversationId: 12, conversationType: "shared_agent", message }))).toEqual({
      conversationId: 12,
      messageId: 88,
      kind: "person",
      from: "Bob's agent",
      groupName: null,
      preview: "Lunch on Friday?",
      arrivedAt: "2026-11-25T08:00:00.000Z",
    });
    expect(arrivalOf(event("message", { conversationId: 31, conversationType: "group", groupName: "Launch crew", message }))).toMatchObject(
      {
        kind: "group",
        groupName: "Launch crew",
      },
    );
  });

  it("ignores unknown types, unreadable data and the personal agent's own conversation", () => {
    expect(arrivalOf(event("typing", { conversationId: 12 }))).toBeNull();
    expect(arrivalOf(event("message", { conversationId: "12", message }))).toBeNull();
    expect(arrivalOf(event("message", { conversationId: 5, conversationType: "direct", message }))).toBeNull();
  });

  it("lists only conversations with people and groups, named by the person or the group", () => {
    const base = { conversationId: 1, unreadCount: 2, updatedAt: "2026-11-25T08:00:00.000Z", messages: [], title: "t" };
    expect(inboxConversation({ ...base, type: "direct" })).toBeNull();
    expect(inboxConversation({ ...base, type: "shared_agent", contact: { userId: "3", username: "bob", name: "" } })).toMatchObject({
      kind: "person",
      title: "bob",
      unreadCount: 2,
      preview: null,
    });
    expect(
      inboxConversation({ ...base, type: "group", group: { name: "Crew", members: [{ userId: "3", username: "bob", name: "Bob" }] } }),
    ).toMatchObject({ kind: "group", title: "Crew", members: [{ userId: "3", username: "bob", name: "Bob" }] });
  });
});

describe("the inbox's host methods against a real server", () => {
  let t: TestServer;
  let ada: TestUser;
  let bob: TestUser;
  let eve: TestUser;

  const session = (user: TestUser, serverUrl = t.server.url) => sessionOf(user, serverUrl);

  beforeAll(async () => {
    t = await startTestServer();
    ada = await t.addUser("ada");
    bob = await t.addUser("bob");
    eve = await t.addUser("eve");
    await ada.client.call("networkRequest", { body: { to: bob.username } });
    await bob.client.call("networkRequest", { body: { to: ada.username } });
  });
  afterAll(() => t?.stop());

  it("starts a conversation, then writes into it as the person, and the other side reads senderType human", async () => {
    const inbox = createInboxFacet(session(ada));
    const first = await inbox.sendInboxMessage({ to: bob.username, message: "Hello Bob" });
    const second = await inbox.sendInboxMessage({ to: `@${bob.username}`, message: "Still there?" });
    expect(second.conversationId).toBe(first.conversationId);
    const reply = await inbox.replyInInbox({ conversationId: first.conversationId, content: "One more", clientMessageId: "c-1" });
    expect(reply).toMatchObject({ senderType: "human", mine: true, content: "One more" });
    // The same client message id again stores nothing new.
    await inbox.replyInInbox({ conversationId: first.conversationId, content: "One more", clientMessageId: "c-1" });

    const bobs = await createInboxFacet(session(bob)).openInboxConversation({ conversationId: first.conversationId });
    expect(bobs.messages.map((message) => [message.content, message.senderType, message.mine])).toEqual([
      ["Hello Bob", "agent", false],
      ["Still there?", "human", false],
      ["One more", "human", false],
    ]);
    expect(bobs.title).toBe(ada.username);
    const list = await createInboxFacet(session(bob)).listInbox({ view: "coo" });
    expect(list.unreadTotal).toBe(3);
    await createInboxFacet(session(bob)).markInboxRead({ conversationId: first.conversationId });
    expect((await createInboxFacet(session(bob)).listInbox({ view: "all" })).unreadTotal).toBe(0);
  });

  it("creates a group and writes into it as the person", async () => {
    const inbox = createInboxFacet(session(ada));
    const { conversationId } = await inbox.createInboxGroup({ name: "Crew", members: [bob.username] });
    await inbox.sendInboxMessage({ to: `group:${conversationId}`, message: "Hi all" });
    const bobs = await createInboxFacet(session(bob)).listInbox({ view: "group" });
    expect(bobs.conversations).toMatchObject([{ conversationId, kind: "group", title: "Crew", unreadCount: 1, preview: "Hi all" }]);
    // Leaving, then leaving again (done elsewhere already): the group is no longer Ada's, and Bob keeps it.
    await inbox.leaveInboxGroup({ conversationId });
    await inbox.leaveInboxGroup({ conversationId });
    expect((await inbox.listInbox({ view: "group" })).conversations).toEqual([]);
    await expect(inbox.openInboxConversation({ conversationId })).rejects.toThrow("no longer there");
    expect((await createInboxFacet(session(bob)).listInbox({ view: "group" })).conversations).toHaveLength(1);
  });

  it("refuses bad input before any request, and says the server's refusals in plain words", async () => {
    const inbox = createInboxFacet(session(ada));
    await expect(inbox.sendInboxMessage({ to: `${bob.username}_coo`, message: "hi" })).rejects.toThrow("not their agent's");
    await expect(inbox.sendInboxMessage({ to: bob.username, message: "   " })).rejects.toThrow("Write something first");
    await expect(inbox.sendInboxMessage({ to: bob.username, message: "x".repeat(4001) })).rejects.toThrow("at most 4000");
    await expect(inbox.sendInboxMessage({ to: "a/../b", message: "hi" })).rejects.toThrow("Give a username");
    await expect(inbox.openInboxConversation({ conversationId: -1 })).rejects.toThrow("invalid input");
    await expect(inbox.sendInboxMessage({ to: "nobody_here", message: "hi" })).rejects.toThrow("There is no one with that username.");
    await expect(inbox.sendInboxMessage({ to: "group:999999", message: "hi" })).rejects.toThrow("no longer there");
    // Someone else's conversation is as absent as one that does not exist.
    const eves = createInboxFacet(session(eve));
    const [adas] = (await inbox.listInbox({ view: "coo" })).conversations;
    await expect(eves.openInboxConversation({ conversationId: adas?.conversationId ?? 0 })).rejects.toThrow("no longer there");
  });

  it("sends to someone not connected as a message request, which they list and answer in words", async () => {
    const inbox = createInboxFacet(session(ada));
    const eves = createInboxFacet(session(eve));
    const { conversationId } = await inbox.sendInboxMessage({ to: eve.username, message: "Hello <b>Eve</b>" });
    // A second message goes the same way (the pair's conversation takes no post from someone not connected).
    await inbox.sendInboxMessage({ to: eve.username, message: "Are you there?" });
    const { supported, requests } = await eves.listInboxRequests();
    expect(supported).toBe(true);
    expect(requests).toMatchObject([{ from: { username: ada.username }, conversationId, messageCount: 2 }]);
    expect(requests[0]?.messages.map((m) => m.content)).toEqual(["Hello <b>Eve</b>", "Are you there?"]);
    expect((await eves.listInbox({ view: "coo" })).conversations).toEqual([]);
    const requestId = requests[0]?.requestId as number;
    const answered = await eves.answerInboxRequest({ requestId, action: "accept" });
    expect(answered).toMatchObject({ status: "accepted", conversationId });
    expect(answered.message).toMatch(/^Accepted: You and /);
    await expect(eves.answerInboxRequest({ requestId, action: "block" })).rejects.toThrow("already answered");
    await expect(eves.answerInboxRequest({ requestId, action: "shout" as "block" })).rejects.toThrow("invalid input");
    expect((await eves.listInbox({ view: "coo" })).conversations.map((c) => c.conversationId)).toEqual([conversationId]);
  });

  it("reports an older server as not supporting the inbox, and an unreachable one in words", async () => {
    const older = createInboxFacet(session(ada, `${t.server.url}/older`));
    expect(await older.listInbox({ view: "all" })).toEqual({ supported: false, conversations: [], unreadTotal: 0 });
    await expect(older.replyInInbox({ conversationId: 1, content: "hi", clientMessageId: "x" })).rejects.toThrow(INBOX_UNSUPPORTED);
    const nowhere = createInboxFacet(session(ada, "http://127.0.0.1:9"));
    await expect(nowhere.listInbox({ view: "all" })).rejects.toThrow(INBOX_OFFLINE);
  });
});

describe("the host's inbox watch", () => {
  let t: TestServer;
  let host: Host;
  let dataDir: string;

  beforeAll(async () => {
    t = await startTestServer();
    dataDir = await tempDir("tandem-inbox-host-");
    host = await startTestHost(dataDir);
  });
  afterAll(async () => {
    await host?.close();
    await t?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("announces only what arrives after sign-in, over the stream, and counts what is unread", async () => {
    const ada = await t.addUser("ada");
    const bob = await t.addUser("bob");
    await ada.client.call("networkRequest", { body: { to: bob.username } });
    await bob.client.call("networkRequest", { body: { to: ada.username } });
    await bob.client.call("agentMessage", { body: { to: ada.username, message: "Before you came" } });
    const announced: unknown[] = [];
    host.context.events.on("inbox-message", (arrival) => announced.push(arrival));

    await signInAs(host, t, ada);
    await waitFor("the earlier message counted", async () => (await host.status()).inboxUnread === 1);
    expect((await host.status()).inboxArrival).toBeNull();

    const started = Date.now();
    await bob.client.call("agentMessage", { body: { to: ada.username, message: "Live <b>now</b>" } });
    const arrival = await waitFor("the live message", async () => (await host.status()).inboxArrival);
    const latencyMs = Date.now() - started;
    expect(arrival).toMatchObject({ kind: "person", preview: "Live <b>now</b>" });
    await waitFor("both counted", async () => (await host.status()).inboxUnread === 2);
    expect(latencyMs).toBeLessThan(5_000);

    // A burst (a reconnect's replay, say) makes one notification, of the newest.
    await waitFor("the notification", () => announced.length === 1);
    await bob.client.call("agentMessage", { body: { to: ada.username, message: "One" } });
    await bob.client.call("agentMessage", { body: { to: ada.username, message: "Two" } });
    await waitFor("the burst", () => announced.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(announced.map((item) => (item as { preview: string }).preview)).toEqual(["Live <b>now</b>", "Two"]);

    await host.api.markInboxRead({ conversationId: arrival.conversationId });
    await waitFor("read", async () => (await host.status()).inboxUnread === 0);

    // A message request is counted for the Inbox to read its requests again; it is no arrival, and announces nothing.
    const stranger = await t.addUser("stranger");
    const before = (await host.status()).inboxRequestsSeen;
    await stranger.client.call("agentMessage", { body: { to: ada.username, message: "Hello <b>there</b>" } });
    await waitFor("the request seen", async () => (await host.status()).inboxRequestsSeen === before + 1);
    expect((await host.status()).inboxArrival?.preview).toBe("Two");
    expect(announced).toHaveLength(2);

    await host.api.signOut();
    expect((await host.status()).inboxArrival).toBeNull();
  });
});
