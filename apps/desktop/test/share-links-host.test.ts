import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGN_IN_SCOPES } from "../../server/src/delegation/runtime/pairing-service";
import { capabilitiesInWords, createShareFacet, SHARE_NOT_ALLOWED, SHARE_OFFLINE, SHARE_UNSUPPORTED } from "../src/host/share/share-links";
import type { ShareLinkInput } from "../src/shared/desktop-api";
import { sessionOf } from "./host-harness";

const NEW_LINK: ShareLinkInput = {
  label: "Garden",
  expiresIn: "7d",
  notesAccess: "read",
  todos: false,
  requireSignIn: false,
  identity: true,
  localAgent: false,
};

describe("a share link's capabilities in words", () => {
  const link = { target: "agent", scope: "all", notesAccess: "read", localAgent: false, capabilities: { todos: false } } as const;
  it("says what the guests' agent may reach", () => {
    const words = (changes: object) => capabilitiesInWords({ ...link, ...changes } as unknown as Parameters<typeof capabilitiesInWords>[0]);
    expect(words({})).toEqual(["Reads your notes"]);
    expect(words({ notesAccess: "write", capabilities: { todos: true } })).toEqual(["Reads and writes your notes", "Reads your todos"]);
    expect(words({ scope: "folders" })).toEqual(["Reads your notes in some folders"]);
    expect(words({ target: "note", scope: "note_only" })).toEqual(["Talks about one note"]);
    expect(words({ localAgent: true })).toContain("Answered from this computer's coding agent when it answers in time");
  });
});

describe("the share links' host methods against a real server", () => {
  let t: TestServer;
  let ada: TestUser;
  let paired: TestUser;
  const session = (user: TestUser, serverUrl = t.server.url) => sessionOf(user, serverUrl);

  beforeAll(async () => {
    t = await startTestServer();
    ada = await t.addUser("ada");
    paired = await t.addUser("pat", SIGN_IN_SCOPES);
  });
  afterAll(() => t?.stop());

  it("creates, lists, renews and revokes a link; revoking twice is done", async () => {
    const share = createShareFacet(session(ada));
    const link = await share.createShareLink(NEW_LINK);
    expect(link).toMatchObject({ label: "Garden", active: true, requireSignIn: false, capabilities: ["Reads your notes"], visitors: 0 });
    expect((await share.listShareLinks()).links.map((item) => item.id)).toEqual([link.id]);
    const renewed = await share.renewShareLink({ id: link.id, expiresIn: "never" });
    expect(renewed.expiresAt).toBeNull();
    await share.revokeShareLink({ id: link.id });
    await share.revokeShareLink({ id: link.id });
    expect((await share.listShareLinks()).links).toEqual([]);
    // A revoked link cannot be renewed: the server says so in its words.
    await expect(share.renewShareLink({ id: link.id, expiresIn: "7d" })).rejects.toThrow();
  });

  it("refuses bad input before any request, and another owner's link is gone", async () => {
    const share = createShareFacet(session(ada));
    await expect(share.createShareLink({ ...NEW_LINK, label: "x".repeat(201) })).rejects.toThrow("at most 200");
    await expect(share.createShareLink({ ...NEW_LINK, notesAccess: "edit" as "write" })).rejects.toThrow("invalid input");
    await expect(share.renewShareLink({ id: 1, expiresIn: "forever" as "never" })).rejects.toThrow("invalid input");
    await expect(share.listGuestConversations({ shareToken: "a/../b" })).rejects.toThrow("invalid input");
    const other = await t.addUser("bob");
    const bobs = await createShareFacet(session(other)).createShareLink(NEW_LINK);
    await expect(share.renewShareLink({ id: bobs.id, expiresIn: "7d" })).rejects.toThrow("no longer there");
    await expect(share.getGuestConversation({ sessionId: "nope" })).rejects.toThrow("no longer there");
  });

  it("says in words that a pairing-code key may not manage links, that an older server has none, and when offline", async () => {
    expect(await createShareFacet(session(paired)).listShareLinks()).toEqual({ supported: true, links: [], notAllowed: SHARE_NOT_ALLOWED });
    expect(await createShareFacet(session(ada, `${t.server.url}/older`)).listShareLinks()).toEqual({ supported: false, links: [] });
    await expect(createShareFacet(session(ada, `${t.server.url}/older`)).createShareLink(NEW_LINK)).rejects.toThrow(SHARE_UNSUPPORTED);
    await expect(createShareFacet(session(ada, "http://127.0.0.1:9")).listShareLinks()).rejects.toThrow(SHARE_OFFLINE);
  });

  it("lists a guest's conversation with the guest's chosen name, and its transcript", async () => {
    const share = createShareFacet(session(ada));
    const link = await share.createShareLink(NEW_LINK);
    const chat = await t.fetch("/api/chat/guest-v04", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: link.token, message: "Hi\nthere", visitorName: "Zed" }),
    });
    expect(chat.status).toBe(200);
    const [row] = await share.listGuestConversations({ shareToken: link.token });
    // The guest's question and the agent's answer.
    expect(row).toMatchObject({ guest: "Zed", linkLabel: "Garden", messageCount: 2 });
    const transcript = await share.getGuestConversation({ sessionId: row?.sessionId ?? "" });
    expect(transcript.messages.map((message) => message.from)).toEqual(["guest", "agent"]);
    expect(transcript.messages[0]?.content).toBe("Hi\nthere");
  });
});
