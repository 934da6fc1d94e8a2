import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, ok, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

interface Member {
  userId: string;
  username: string;
  role: "admin" | "member";
}
interface Group {
  id: number;
  name: string;
  role: "admin" | "member";
  members: Member[];
}
interface Message {
  id: number;
  senderType: string;
  senderId: string;
  content: string;
}
interface GroupSend {
  success: boolean;
  mode: string;
  groupName: string;
  conversationId: number;
  messageId: number;
  delivered: boolean;
  response: null;
  intent: string;
  duplicate: boolean;
  elapsedMs: number;
  error?: string;
}

describe.each(storages("group messaging suite"))("groups (%s)", (storage) => {
  let t: TestServer;
  let serial = 0;
  const user = (name: string) => t.addUser(`${name}${++serial}`);
  const post = <T>(who: TestUser, path: string, body?: unknown) => call<T>(t, who.apiKey, "POST", path, body);
  const groupOf = async (who: TestUser, id: number) => (await ok<{ group: Group }>(t, who.apiKey, "GET", `/groups/${id}`)).group;

  async function friends(a: TestUser, b: TestUser) {
    await ok(t, a.apiKey, "POST", "/network/request", { to: b.username });
    await ok(t, b.apiKey, "POST", "/network/request", { to: a.username });
  }

  /** alice (admin) with bob and carol, all alice's contacts. */
  async function team() {
    const [alice, bob, carol] = [await user("alice"), await user("bob"), await user("carol")];
    await friends(alice, bob);
    await friends(alice, carol);
    const created = await post<{ group: Group }>(alice, "/groups", { name: "Launch crew", members: [bob.username, String(carol.userId)] });
    expect(created.status).toBe(201);
    return { alice, bob, carol, group: created.body.group };
  }

  beforeAll(async () => {
    t = await startTestServer({}, storage);
  });
  afterAll(() => t?.stop());

  it("creates a group with its creator as admin, and lists it for every member", async () => {
    const { alice, bob, carol, group } = await team();
    expect(group.name).toBe("Launch crew");
    expect(group.role).toBe("admin");
    expect(group.members.map((m) => [m.username, m.role])).toEqual([
      [alice.username, "admin"],
      [bob.username, "member"],
      [carol.username, "member"],
    ]);
    const bobs = await ok<{ groups: Group[] }>(t, bob.apiKey, "GET", "/groups");
    expect(bobs.groups.map((g) => [g.id, g.role])).toEqual([[group.id, "member"]]);
    const view = await ok<{ conversations: { conversationId: number; type: string; group: Group }[] }>(
      t,
      carol.apiKey,
      "GET",
      "/conversations?view=group",
    );
    expect(view.conversations.map((c) => [c.conversationId, c.type, c.group.name])).toEqual([[group.id, "group", "Launch crew"]]);
  });

  it("refuses strangers as members and a group of nobody", async () => {
    const [alice, stranger] = [await user("alice"), await user("stranger")];
    const refused = await post<{ error: string }>(alice, "/groups", { name: "x", members: [stranger.username] });
    expect([refused.status, refused.body.error]).toEqual([403, "not_connected"]);
    expect((await post(alice, "/groups", { name: "x", members: ["no-such-user"] })).status).toBe(404);
    expect((await post(alice, "/groups", { name: "x", members: [alice.username] })).status).toBe(400);
    expect((await post(alice, "/groups", { name: "", members: [stranger.username] })).status).toBe(400);
  });

  it("posts with group:<id> to active members only, at most once per clientMessageId", async () => {
    const { alice, bob, group } = await team();
    const first = await post<GroupSend>(bob, "/agent/message", {
      to: `group:${group.id}`,
      message: "Ship it Monday?",
      clientMessageId: "b-1",
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      mode: "group",
      groupName: "Launch crew",
      conversationId: group.id,
      delivered: true,
      response: null,
      intent: "inform",
      duplicate: false,
    });
    const repeat = await post<GroupSend>(bob, "/agent/message", {
      to: `group:${group.id}`,
      message: "Ship it Monday?",
      clientMessageId: "b-1",
    });
    expect(repeat.body).toMatchObject({ duplicate: true, messageId: first.body.messageId });
    // Concurrent repeats of a new id store it once.
    const burst = await Promise.all(
      Array.from({ length: 6 }, () =>
        post<GroupSend>(alice, "/agent/message", { to: `group:${group.id}`, message: "Yes", clientMessageId: "a-1" }),
      ),
    );
    expect(new Set(burst.map((b) => b.body.messageId)).size).toBe(1);
    expect(burst.filter((b) => !b.body.duplicate)).toHaveLength(1);
    const read = await ok<{ messages: Message[]; cursor: number }>(t, bob.apiKey, "GET", `/groups/${group.id}/messages?after=0`);
    expect(read.messages.map((m) => [m.content, m.senderType])).toEqual([
      ["Ship it Monday?", "agent"],
      ["Yes", "agent"],
    ]);
    const after = await ok<{ messages: Message[]; cursor: number }>(
      t,
      bob.apiKey,
      "GET",
      `/groups/${group.id}/messages?after=${first.body.messageId}`,
    );
    expect(after.messages.map((m) => m.content)).toEqual(["Yes"]);
    expect(after.cursor).toBe(after.messages[0]?.id);
    // An outsider, an unknown group and a former member are the same 404.
    const outsider = await user("outsider");
    for (const to of [`group:${group.id}`, "group:999999"]) {
      const refused = await post<GroupSend>(outsider, "/agent/message", { to, message: "hi" });
      expect([refused.status, refused.body.error]).toEqual([404, "group_not_found"]);
    }
    expect((await call(t, outsider.apiKey, "GET", `/groups/${group.id}/messages`)).status).toBe(404);
    await ok(t, bob.apiKey, "POST", `/groups/${group.id}/leave`);
    expect((await post(bob, "/agent/message", { to: `group:${group.id}`, message: "still here?" })).status).toBe(404);
    expect((await call(t, bob.apiKey, "GET", `/groups/${group.id}`)).status).toBe(404);
  });

  it("keys clientMessageId per sender: another member's same id is a post of its own", async () => {
    const { alice, bob, carol, group } = await team();
    const send = (who: TestUser, message: string) =>
      post<GroupSend>(who, "/agent/message", { to: `group:${group.id}`, message, clientMessageId: "same-id" });
    const bobs = await send(bob, "From Bob");
    const alices = await send(alice, "From Alice");
    expect([bobs.body.duplicate, alices.body.duplicate]).toEqual([false, false]);
    expect(alices.body.messageId).not.toBe(bobs.body.messageId);
    // As the person, through the conversation route: Carol's id is hers too.
    const carols = await post<{ message: Message; duplicate: boolean }>(carol, `/conversations/${group.id}/messages`, {
      content: "From Carol",
      clientMessageId: "same-id",
    });
    expect([carols.status, carols.body.duplicate]).toEqual([201, false]);
    // Each sender's own repeat is still the first message, stored once.
    expect((await send(bob, "From Bob")).body).toMatchObject({ duplicate: true, messageId: bobs.body.messageId });
    const again = await post<{ message: Message; duplicate: boolean }>(carol, `/conversations/${group.id}/messages`, {
      content: "From Carol",
      clientMessageId: "same-id",
    });
    expect([again.status, again.body.duplicate, again.body.message.id]).toEqual([200, true, carols.body.message.id]);
    const read = await ok<{ messages: Message[] }>(t, carol.apiKey, "GET", `/groups/${group.id}/messages?after=0`);
    expect(read.messages.map((m) => [m.content, m.senderId])).toEqual([
      ["From Bob", String(bob.userId)],
      ["From Alice", String(alice.userId)],
      ["From Carol", String(carol.userId)],
    ]);
  });

  it("does not take a pair's conversation or a personal one for a group", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    await friends(alice, bob);
    const pair = (await post<GroupSend>(alice, "/agent/message", { to: bob.username, message: "hi" })).body.conversationId;
    await ok(t, alice.apiKey, "POST", "/chat", { message: "hello", stream: false });
    const direct = (await ok<{ conversations: { conversationId: number }[] }>(t, alice.apiKey, "GET", "/conversations?view=me"))
      .conversations[0]?.conversationId as number;
    for (const id of [pair, direct]) {
      expect((await post(alice, "/agent/message", { to: `group:${id}`, message: "x" })).status).toBe(404);
      expect((await call(t, alice.apiKey, "GET", `/groups/${id}`)).status).toBe(404);
      expect((await call(t, alice.apiKey, "GET", `/groups/${id}/messages`)).status).toBe(404);
      expect((await call(t, alice.apiKey, "POST", `/groups/${id}/leave`)).status).toBe(404);
    }
  });

  it("lets admins rename, add and remove; members may not", async () => {
    const { alice, bob, carol, group } = await team();
    const dave = await user("dave");
    await friends(alice, dave);
    await friends(bob, dave);
    expect((await call<{ error: string }>(t, bob.apiKey, "PATCH", `/groups/${group.id}`, { name: "Mine" })).body.error).toBe(
      "not_group_admin",
    );
    expect((await post(bob, `/groups/${group.id}/members`, { members: [dave.username] })).status).toBe(403);
    expect((await call(t, bob.apiKey, "DELETE", `/groups/${group.id}/members/${carol.userId}`)).status).toBe(403);
    const renamed = await ok<{ group: Group }>(t, alice.apiKey, "PATCH", `/groups/${group.id}`, { name: "Launch team" });
    expect(renamed.group.name).toBe("Launch team");
    const added = await ok<{ group: Group }>(t, alice.apiKey, "POST", `/groups/${group.id}/members`, { members: [dave.username] });
    expect(added.group.members.map((m) => m.username)).toContain(dave.username);
    const removed = await ok<{ group: Group }>(t, alice.apiKey, "DELETE", `/groups/${group.id}/members/${carol.userId}`);
    expect(removed.group.members.map((m) => m.username)).not.toContain(carol.username);
    expect((await call(t, carol.apiKey, "GET", `/groups/${group.id}/messages`)).status).toBe(404);
    expect((await call(t, alice.apiKey, "DELETE", `/groups/${group.id}/members/${carol.userId}`)).status).toBe(404);
    // A removed member can be added back.
    const back = await ok<{ group: Group }>(t, alice.apiKey, "POST", `/groups/${group.id}/members`, { members: [carol.username] });
    expect(back.group.members.map((m) => m.username)).toContain(carol.username);
  });

  it("hands the group on when its admin leaves", async () => {
    const { alice, bob, carol, group } = await team();
    const left = await ok<{ left: boolean; newAdmin: { username: string } | null }>(t, alice.apiKey, "POST", `/groups/${group.id}/leave`);
    expect(left.newAdmin?.username).toBe(bob.username);
    const now = await groupOf(bob, group.id);
    expect(now.role).toBe("admin");
    expect(now.members.map((m) => m.username)).toEqual([bob.username, carol.username]);
    expect((await call(t, alice.apiKey, "POST", `/groups/${group.id}/leave`)).status).toBe(404);
    // Bob may now rename it.
    expect((await call(t, bob.apiKey, "PATCH", `/groups/${group.id}`, { name: "Bob's crew" })).status).toBe(200);
  });

  it("takes a person's own message as senderType human and tells the others live", async () => {
    const { alice, bob, carol, group } = await team();
    const posted = await post<{ message: Message }>(carol, `/conversations/${group.id}/messages`, { content: "I'll bring the slides." });
    expect(posted.status).toBe(201);
    expect(posted.body.message.senderType).toBe("human");
    for (const who of [alice, bob]) {
      const { events } = await ok<{ events: { type: string; data: { conversationId: number; groupName: string; message: Message } }[] }>(
        t,
        who.apiKey,
        "GET",
        "/agent/events?cursor=0",
      );
      const last = events.at(-1);
      expect([last?.type, last?.data.conversationId, last?.data.groupName, last?.data.message.content]).toEqual([
        "message",
        group.id,
        "Launch crew",
        "I'll bring the slides.",
      ]);
    }
    const carols = await ok<{ events: unknown[] }>(t, carol.apiKey, "GET", "/agent/events?cursor=0");
    expect(carols.events).toEqual([]);
  });
});
