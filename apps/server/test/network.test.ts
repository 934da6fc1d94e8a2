import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasAgentPermission } from "../src/people/network/permissions";
import { call, grantAgentAccess, insertGrant, insertQueuedMessage, ok, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

interface Person {
  userId: string;
  username: string;
  name: string;
}
interface PendingList {
  incoming: { requestId: number; type: string; from: Person; createdAt: string }[];
  outgoing: { requestId: number; type: string; to: Person; createdAt: string }[];
}
interface Contact extends Person {
  direction: string;
  friend: boolean;
  theirPermissionsToYou: Record<string, unknown> | null;
  yourPermissionsToThem: Record<string, unknown> | null;
  since: string;
}
interface Overview {
  network: { shareLinks: unknown[]; visitors: unknown[]; contacts: Contact[]; summary: Record<string, number> };
}
interface AuditBody {
  entries: {
    id: number;
    action: string;
    objectType: string;
    objectId: string;
    actor: { userId: string | null; username?: string; credential: string };
    parties: string[];
    detail: Record<string, unknown> | null;
    createdAt: string;
  }[];
  nextBefore: number | null;
}

const NOTES_READ = { notesAccess: { scope: "all", access: "read" }, calendarAccess: { read: "free_busy", write: false } };

describe.each(storages("network suite"))("network handshake and audit (%s)", (storage) => {
  let t: TestServer;
  let serial = 0;
  /** A fresh user per test, so tests never see each other's handshakes. */
  const user = (name: string) => t.addUser(`${name}${++serial}`);

  const request = (from: TestUser, to: string) =>
    call<{ requestId: number; status: string; type: string; error?: string }>(t, from.apiKey, "POST", "/network/request", { to });
  const pending = (who: TestUser) => ok<PendingList>(t, who.apiKey, "GET", "/network/requests");
  const contactsOf = async (who: TestUser) => (await ok<Overview>(t, who.apiKey, "GET", "/network")).network;
  const contactOf = async (who: TestUser, other: TestUser) =>
    (await contactsOf(who)).contacts.find((c) => c.userId === String(other.userId));
  const accept = (who: TestUser, requestId: number, type: string, extra: Record<string, unknown> = {}) =>
    call(t, who.apiKey, "POST", "/network/accept", { requestId, type, action: "accept", ...extra });
  const permitted = (grantor: TestUser, grantee: TestUser) => hasAgentPermission(t.server.context.db, grantor.userId, grantee.userId);

  beforeAll(async () => {
    t = await startTestServer({}, storage);
  });
  afterAll(() => t?.stop());

  it("runs the agent-access handshake: request, list, accept with permissions, overview both sides", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const sent = await request(alice, `${bob.username}_coo`);
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({
      success: true,
      type: "agent",
      status: "pending",
      to: { userId: String(bob.userId), username: bob.username, name: bob.username },
    });
    expect(typeof sent.body.requestId).toBe("number");
    expect(typeof (sent.body as { message?: unknown }).message).toBe("string");

    const bobs = await pending(bob);
    expect(bobs.incoming).toEqual([
      {
        requestId: sent.body.requestId,
        type: "agent",
        from: { userId: String(alice.userId), username: alice.username, name: alice.username },
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    ]);
    expect(bobs.outgoing).toEqual([]);
    expect((await pending(alice)).outgoing).toMatchObject([
      { requestId: sent.body.requestId, type: "agent", to: { username: bob.username } },
    ]);
    expect(await permitted(bob, alice)).toBe(false);

    const accepted = await accept(bob, sent.body.requestId, "agent", { permissions: NOTES_READ });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      success: true,
      requestId: sent.body.requestId,
      type: "agent",
      status: "accepted",
      permissions: NOTES_READ,
    });
    expect(await permitted(bob, alice)).toBe(true);
    expect(await permitted(alice, bob)).toBe(false);
    expect((await pending(bob)).incoming).toEqual([]);
    expect((await pending(alice)).outgoing).toEqual([]);

    // Alice's agent can reach Bob's: outbound for her, inbound for him.
    const hers = await contactsOf(alice);
    expect(hers.contacts).toEqual([
      expect.objectContaining({
        userId: String(bob.userId),
        username: bob.username,
        direction: "outbound",
        friend: false,
        theirPermissionsToYou: NOTES_READ,
        yourPermissionsToThem: null,
      }),
    ]);
    expect(hers.summary).toEqual({
      totalLinks: 0,
      activeLinks: 0,
      totalVisitors: 0,
      totalConversations: 0,
      totalMessages: 0,
      totalContacts: 1,
      mutual: 0,
      inbound: 0,
      outbound: 1,
    });
    expect(hers.shareLinks).toEqual([]);
    expect(hers.visitors).toEqual([]);
    expect(await contactOf(bob, alice)).toMatchObject({
      direction: "inbound",
      theirPermissionsToYou: null,
      yourPermissionsToThem: NOTES_READ,
    });

    // Access the other way too makes it mutual.
    const back = await request(bob, `${alice.username}_coo`);
    expect(back.status).toBe(201);
    expect((await accept(alice, back.body.requestId, "agent")).body).toMatchObject({ status: "accepted", permissions: {} });
    expect(await contactOf(alice, bob)).toMatchObject({
      direction: "mutual",
      theirPermissionsToYou: NOTES_READ,
      yourPermissionsToThem: {},
    });
    expect((await contactsOf(bob)).summary).toMatchObject({ totalContacts: 1, mutual: 1, inbound: 0, outbound: 0 });
    // The alias the interface lists answers the same.
    expect(await ok(t, alice.apiKey, "GET", "/os/network")).toEqual(await ok(t, alice.apiKey, "GET", "/network"));
    // The typed client validates answers against the route table's schemas.
    expect((await alice.client.call("networkOverview")).network.contacts).toHaveLength(1);
    expect((await bob.client.call("networkListRequests")).incoming).toEqual([]);
  });

  it("answers repeats with 409 already_pending, then already_connected, whatever the case of the handle", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const first = await request(alice, `${bob.username}_coo`);
    expect(first.status).toBe(201);
    const again = await request(alice, `${bob.username.toUpperCase()}_COO`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ success: false, error: "already_pending" });
    expect((await pending(bob)).incoming).toHaveLength(1);

    await accept(bob, first.body.requestId, "agent");
    const connected = await request(alice, `@${bob.username}_coo`);
    expect(connected.status).toBe(409);
    expect(connected.body).toMatchObject({ error: "already_connected" });

    // A friend request is a separate thing: allowed, then repeated → already_pending.
    expect((await request(alice, bob.username)).status).toBe(201);
    expect((await request(alice, bob.username)).body).toMatchObject({ error: "already_pending" });
  });

  it("makes friends both ways, and a crossing friend request accepts the one already pending", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const sent = await request(alice, bob.username);
    expect(sent.body).toMatchObject({ type: "friend", status: "pending" });
    const crossing = await request(bob, alice.username);
    expect(crossing.status).toBe(201);
    expect(crossing.body).toMatchObject({ requestId: sent.body.requestId, type: "friend", status: "accepted" });
    expect((await pending(alice)).outgoing).toEqual([]);
    expect(await contactOf(alice, bob)).toMatchObject({
      direction: "mutual",
      friend: true,
      theirPermissionsToYou: null,
      yourPermissionsToThem: null,
    });
    expect(await contactOf(bob, alice)).toMatchObject({ direction: "mutual", friend: true });
    expect((await request(bob, alice.username)).body).toMatchObject({ error: "already_connected" });
    expect((await request(alice, bob.username)).body).toMatchObject({ error: "already_connected" });
    // Friendship alone gives no agent access.
    expect(await permitted(alice, bob)).toBe(false);
    expect(await permitted(bob, alice)).toBe(false);
  });

  it("accepts an ordinary friend request from the recipient", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const sent = await request(alice, bob.username);
    const accepted = await accept(bob, sent.body.requestId, "friend");
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ status: "accepted", type: "friend", from: { username: alice.username } });
    expect(accepted.body).not.toHaveProperty("permissions");
    expect(await contactOf(bob, alice)).toMatchObject({ friend: true, direction: "mutual" });
  });

  it("declines: nothing is created, the request leaves both lists, and the requester may ask again", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const sent = await request(alice, `${bob.username}_coo`);
    const declined = await call(t, bob.apiKey, "POST", "/network/accept", {
      requestId: sent.body.requestId,
      type: "agent",
      action: "decline",
    });
    expect(declined.status).toBe(200);
    expect(declined.body).toMatchObject({ success: true, status: "declined", type: "agent" });
    expect(declined.body).not.toHaveProperty("permissions");
    expect(await permitted(bob, alice)).toBe(false);
    expect((await pending(bob)).incoming).toEqual([]);
    expect((await pending(alice)).outgoing).toEqual([]);
    expect(await contactOf(alice, bob)).toBeUndefined();
    // Resolving it again is refused; a new request is fine.
    const twice = await accept(bob, sent.body.requestId, "agent");
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ error: "request_already_resolved" });
    expect((await request(alice, `${bob.username}_coo`)).status).toBe(201);
  });

  it("lets only the recipient resolve: the sender and strangers get 404; a wrong type is 400; twice is 409", async () => {
    const [alice, bob, mallory] = [await user("alice"), await user("bob"), await user("mallory")];
    const sent = await request(alice, `${bob.username}_coo`);
    const { requestId } = sent.body;
    for (const intruder of [alice, mallory]) {
      const attempt = await accept(intruder, requestId, "agent");
      expect(attempt.status).toBe(404);
      expect(attempt.body).toMatchObject({ success: false, error: "request_not_found" });
    }
    expect((await accept(bob, 987_654, "agent")).body).toMatchObject({ error: "request_not_found" });
    const wrongType = await accept(bob, requestId, "friend");
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({ error: "request_type_mismatch" });
    expect(await permitted(bob, alice)).toBe(false);
    expect(await permitted(bob, mallory)).toBe(false);

    // A request id as a string (as some scripts send it) is the same request.
    const accepted = await accept(bob, String(requestId) as unknown as number, "agent");
    expect(accepted.status).toBe(200);
    const twice = await accept(bob, requestId, "agent");
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ error: "request_already_resolved" });
  });

  it("refuses unknown people (404 user_not_found) and oneself (400 cannot_connect_to_self)", async () => {
    const alice = await user("alice");
    for (const to of ["nobody-here", "nobody-here_coo", "_coo", "@"]) {
      const response = await request(alice, to);
      expect(response.status, to).toBe(404);
      expect(response.body).toMatchObject({ success: false, error: "user_not_found" });
    }
    for (const to of [alice.username, `${alice.username}_coo`, alice.username.toUpperCase()]) {
      const response = await request(alice, to);
      expect(response.status, to).toBe(400);
      expect(response.body).toMatchObject({ error: "cannot_connect_to_self" });
    }
  });

  it("answers bad bodies with 400 naming the field and changes nothing", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    for (const body of [{}, { to: "" }, { to: "   " }, { to: 42 }, { to: null }, { to: "x".repeat(129) }]) {
      const response = await call(t, alice.apiKey, "POST", "/network/request", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body).toMatchObject({ success: false, error: "invalid_request", message: expect.stringContaining("body.to") });
    }
    const notJson = await t.fetch("/api/v1/network/request", {
      method: "POST",
      headers: { authorization: `Bearer ${alice.apiKey}`, "content-type": "application/json" },
      body: "{to:",
    });
    expect(notJson.status).toBe(400);

    const { requestId } = (await request(alice, `${bob.username}_coo`)).body;
    const badAccepts: [Record<string, unknown>, string][] = [
      [{ requestId, type: "agent", action: "accept", permissions: "all" }, "body.permissions"],
      [{ requestId, type: "agent", action: "accept", permissions: ["notes"] }, "body.permissions"],
      [{ requestId, type: "agent", action: "accept", permissions: 7 }, "body.permissions"],
      [{ requestId, type: "agent", action: "accept", permissions: { notes: "x".repeat(201) } }, "body.permissions"],
      [{ requestId, type: "agent", action: "accept", permissions: { __proto__x: "read" } }, "body.permissions"],
      [{ requestId, type: "agent", action: "accept", permissions: { notes: { deep: { deeper: true } } } }, "body.permissions"],
      [
        {
          requestId,
          type: "agent",
          action: "accept",
          permissions: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`cap${i}`, "y".repeat(100)])),
        },
        "body.permissions",
      ],
      [{ requestId, type: "agent", action: "maybe" }, "body.action"],
      [{ requestId, type: "agent" }, "body.action"],
      [{ requestId, type: "robot", action: "accept" }, "body.type"],
      [{ type: "agent", action: "accept" }, "body.requestId"],
      [{ requestId: -1, type: "agent", action: "accept" }, "body.requestId"],
      [{ requestId: "abc", type: "agent", action: "accept" }, "body.requestId"],
    ];
    for (const [body, field] of badAccepts) {
      const response = await call(t, bob.apiKey, "POST", "/network/accept", body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.body).toMatchObject({ error: "invalid_request", message: expect.stringContaining(field) });
    }
    // Over 4 KiB in few capabilities is refused by size.
    const oversized = await accept(bob, requestId, "agent", {
      permissions: {
        a: "z".repeat(200),
        ...Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`c${i}`, { level: "w".repeat(180) }])),
      },
    });
    expect(oversized.status).toBe(400);
    expect(oversized.body).toMatchObject({ message: expect.stringContaining("4096 bytes") });

    expect(await permitted(bob, alice)).toBe(false);
    expect((await pending(bob)).incoming).toHaveLength(1);
    const bad = await call(t, bob.apiKey, "PUT", `/network/contacts/${alice.userId}/permissions`, { permissions: [] });
    expect(bad.status).toBe(400);
    expect((await call(t, bob.apiKey, "PUT", `/network/contacts/${alice.userId}/permissions`, {})).status).toBe(400);
    expect((await call(t, bob.apiKey, "PUT", "/network/contacts/not-a-number/permissions", { permissions: {} })).status).toBe(400);
    expect((await call(t, alice.apiKey, "DELETE", "/network/requests/abc")).status).toBe(400);
  });

  it("lets the sender withdraw a pending request, and nobody else", async () => {
    const [alice, bob, mallory] = [await user("alice"), await user("bob"), await user("mallory")];
    const { requestId } = (await request(alice, `${bob.username}_coo`)).body;
    for (const other of [bob, mallory]) {
      const attempt = await call(t, other.apiKey, "DELETE", `/network/requests/${requestId}`);
      expect(attempt.status).toBe(404);
      expect(attempt.body).toMatchObject({ error: "request_not_found" });
    }
    const withdrawn = await call(t, alice.apiKey, "DELETE", `/network/requests/${requestId}`);
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body).toMatchObject({ success: true, requestId, type: "agent", status: "withdrawn" });
    expect((await pending(bob)).incoming).toEqual([]);
    expect((await accept(bob, requestId, "agent")).body).toMatchObject({ error: "request_not_found" });
    expect((await call(t, alice.apiKey, "DELETE", `/network/requests/${requestId}`)).body).toMatchObject({
      error: "request_already_resolved",
    });
    expect(await permitted(bob, alice)).toBe(false);
    // A fresh request is possible afterwards.
    expect((await request(alice, `${bob.username}_coo`)).status).toBe(201);
  });

  it("changes and withdraws the permissions one gave; only the grantor can, only if given", async () => {
    const [alice, bob, carol] = [await user("alice"), await user("bob"), await user("carol")];
    await grantAgentAccess(t, alice, bob);
    const path = `/network/contacts/${alice.userId}/permissions`;
    const changed = await call(t, bob.apiKey, "PUT", path, { permissions: { todoAccess: { read: true, create: false } } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      success: true,
      userId: String(alice.userId),
      permissions: { todoAccess: { read: true, create: false } },
    });
    expect(await contactOf(alice, bob)).toMatchObject({ theirPermissionsToYou: { todoAccess: { read: true, create: false } } });

    // Alice cannot edit what Bob gave her; Bob gave Carol nothing; unknown ids are just absent.
    for (const [who, target] of [
      [alice, bob],
      [bob, carol],
      [carol, alice],
    ] as const) {
      const attempt = await call(t, who.apiKey, "PUT", `/network/contacts/${target.userId}/permissions`, { permissions: {} });
      expect(attempt.status).toBe(404);
      expect(attempt.body).toMatchObject({ error: "permission_not_found" });
      expect((await call(t, who.apiKey, "DELETE", `/network/contacts/${target.userId}/permissions`)).status).toBe(404);
    }
    expect((await call(t, bob.apiKey, "PUT", "/network/contacts/99999999/permissions", { permissions: {} })).status).toBe(404);

    const withdrawn = await call(t, bob.apiKey, "DELETE", path);
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body).toMatchObject({ success: true, userId: String(alice.userId), grantsEnded: 0 });
    expect(await permitted(bob, alice)).toBe(false);
    expect(await contactOf(alice, bob)).toBeUndefined();
    expect((await call(t, bob.apiKey, "DELETE", path)).body).toMatchObject({ error: "permission_not_found" });
    // Alice may ask again.
    expect((await request(alice, `${bob.username}_coo`)).status).toBe(201);
  });

  it("withdrawing agent access revokes that person's open grants to you, and their queued deliveries, at once", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    await grantAgentAccess(t, alice, bob);
    await grantAgentAccess(t, bob, alice);
    const { db } = t.server.context;
    const frozen = { endpointId: "ep_frozen", sessionHandle: "sess_frozen" };
    const grant = (id: string, requester: TestUser, recipient: TestUser, status: "pending" | "active" | "declined") => ({
      id: `cs_${id}${serial}`,
      requesterId: requester.userId,
      recipientId: recipient.userId,
      status,
      route: frozen,
    });
    const grants = [
      grant("active", alice, bob, "active"),
      grant("pending", alice, bob, "pending"),
      grant("declined", alice, bob, "declined"),
      grant("reverse", bob, alice, "active"),
    ];
    for (const g of grants) await insertGrant(t, g);
    const messageId = `msg_queued${serial}`;
    await insertQueuedMessage(t, {
      id: messageId,
      deliveryId: `dlv_queued${serial}`,
      grantId: grants[0]?.id as string,
      senderId: alice.userId,
      recipientId: bob.userId,
      route: frozen,
      clientMessageId: "c1",
    });

    const withdrawn = await call(t, bob.apiKey, "DELETE", `/network/contacts/${alice.userId}/permissions`);
    expect(withdrawn.status).toBe(200);
    expect(withdrawn.body).toMatchObject({ grantsEnded: 2 });
    const statuses = await db
      .selectFrom("grants")
      .select(["id", "status"])
      .where(
        "id",
        "in",
        grants.map((g) => g.id),
      )
      .execute();
    expect(Object.fromEntries(statuses.map((g) => [g.id, g.status]))).toEqual({
      [grants[0]?.id as string]: "revoked",
      [grants[1]?.id as string]: "revoked",
      [grants[2]?.id as string]: "declined",
      // Bob's own grant to Alice rests on Alice's permission, which stands.
      [grants[3]?.id as string]: "active",
    });
    const message = await db.selectFrom("messages").select("status").where("id", "=", messageId).executeTakeFirstOrThrow();
    expect(message.status).toBe("revoked");
    expect(await permitted(bob, alice)).toBe(false);
    expect(await permitted(alice, bob)).toBe(true);
    const { entries } = await ok<AuditBody>(t, alice.apiKey, "GET", "/local-agent/audit?limit=3");
    expect(entries.map((e) => e.action)).toEqual(["grant.revoke", "grant.revoke", "network.permissions.withdraw"]);
  });

  it("removes a friendship on both sides, leaving agent access alone", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const { requestId } = (await request(alice, bob.username)).body;
    await accept(bob, requestId, "friend");
    await grantAgentAccess(t, alice, bob);
    const removed = await call(t, alice.apiKey, "DELETE", `/network/contacts/${bob.userId}`);
    expect(removed.status).toBe(200);
    expect(await contactOf(alice, bob)).toMatchObject({ friend: false, direction: "outbound" });
    expect(await contactOf(bob, alice)).toMatchObject({ friend: false, direction: "inbound" });
    expect(await permitted(bob, alice)).toBe(true);
    const again = await call(t, bob.apiKey, "DELETE", `/network/contacts/${alice.userId}`);
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ error: "contact_not_found" });
  });

  it("keeps identical concurrent requests to one", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const answers = await Promise.all(Array.from({ length: 6 }, () => request(alice, `${bob.username}_coo`)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect((await pending(bob)).incoming).toHaveLength(1);
  });

  it("checks scopes: os.network:read to look, os.network:write to change", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    const notesOnly = await t.addUser(`notesonly${++serial}`, ["os.notes:read"]);
    const readOnly = await t.addUser(`readonly${++serial}`, ["os.network:read"]);
    const writeOnly = await t.addUser(`writeonly${++serial}`, ["os.network:write"]);
    const { requestId } = (await request(alice, `${notesOnly.username}_coo`)).body;
    const attempts: [TestUser, string, string, unknown][] = [
      [notesOnly, "GET", "/network", undefined],
      [notesOnly, "GET", "/os/network", undefined],
      [notesOnly, "GET", "/network/requests", undefined],
      [notesOnly, "POST", "/network/request", { to: bob.username }],
      [notesOnly, "POST", "/network/accept", { requestId, type: "agent", action: "accept" }],
      [notesOnly, "DELETE", `/network/requests/${requestId}`, undefined],
      [notesOnly, "PUT", `/network/contacts/${alice.userId}/permissions`, { permissions: {} }],
      [notesOnly, "DELETE", `/network/contacts/${alice.userId}/permissions`, undefined],
      [notesOnly, "DELETE", `/network/contacts/${alice.userId}`, undefined],
      [readOnly, "POST", "/network/request", { to: bob.username }],
      [writeOnly, "GET", "/network", undefined],
      [writeOnly, "GET", "/network/requests", undefined],
      [notesOnly, "GET", "/local-agent/audit", undefined],
    ];
    for (const [who, method, path, body] of attempts) {
      const response = await call(t, who.apiKey, method, path, body);
      expect(response.status, `${who.username} ${method} ${path}`).toBe(403);
      expect(response.body).toMatchObject({ success: false, error: "insufficient_scope" });
    }
    expect(await permitted(notesOnly, alice)).toBe(false);
    expect((await call(t, readOnly.apiKey, "GET", "/network")).status).toBe(200);
    expect((await call(t, writeOnly.apiKey, "POST", "/network/request", { to: bob.username })).status).toBe(201);
    expect((await call(t, null, "GET", "/network")).status).toBe(401);
    expect((await call(t, "svc_sk_notarealkey", "POST", "/network/request", { to: bob.username })).status).toBe(401);
  });

  it("lets a bridge's device token read its owner's audit entries, and keeps it off the network routes", async () => {
    const [alice, bob] = [await user("alice"), await user("bob")];
    await grantAgentAccess(t, alice, bob);
    const register = (who: TestUser) =>
      ok<{ deviceToken: string }>(t, who.apiKey, "POST", "/local-agent/endpoints", {
        runtime: "claude-code",
        deviceId: `dev-${who.username}`,
      });
    const [aliceDevice, bobDevice] = [(await register(alice)).deviceToken, (await register(bob)).deviceToken];
    const viaKey = await ok<AuditBody>(t, alice.apiKey, "GET", "/local-agent/audit");
    const viaDevice = await ok<AuditBody>(t, aliceDevice, "GET", "/local-agent/audit");
    expect(viaDevice.entries).toEqual(viaKey.entries);
    expect(viaDevice.entries.map((e) => e.action)).toEqual(expect.arrayContaining(["network.request.accept", "network.request.send"]));
    // Bob's device reads the handshake (he is a party) but not Alice's own endpoint registration.
    const bobs = await ok<AuditBody>(t, bobDevice, "GET", "/local-agent/audit");
    expect(bobs.entries.every((e) => e.parties.includes(String(bob.userId)) || e.actor.userId === String(bob.userId))).toBe(true);
    for (const [method, path, body] of [
      ["GET", "/network", undefined],
      ["GET", "/network/requests", undefined],
      ["POST", "/network/request", { to: `${bob.username}_coo` }],
      ["DELETE", `/network/contacts/${alice.userId}/permissions`, undefined],
    ] as const) {
      const response = await call(t, bobDevice, method, path, body);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body).toMatchObject({ error: "wrong_credential_type" });
    }
    expect(await permitted(bob, alice)).toBe(true);
  });

  it("records every change in the audit log, readable by the people involved and nobody else", async () => {
    const [alice, bob, carol] = [await user("alice"), await user("bob"), await user("carol")];
    const friend = (await request(alice, bob.username)).body.requestId;
    await call(t, alice.apiKey, "DELETE", `/network/requests/${friend}`);
    await grantAgentAccess(t, alice, bob, { todoAccess: { read: true } });
    await call(t, bob.apiKey, "PUT", `/network/contacts/${alice.userId}/permissions`, { permissions: {} });
    await call(t, bob.apiKey, "DELETE", `/network/contacts/${alice.userId}/permissions`);
    const declined = (await request(bob, `${alice.username}_coo`)).body.requestId;
    await call(t, alice.apiKey, "POST", "/network/accept", { requestId: declined, type: "agent", action: "decline" });

    const expected = [
      "network.request.decline",
      "network.request.send",
      "network.permissions.withdraw",
      "network.permissions.update",
      "network.request.accept",
      "network.request.send",
      "network.request.withdraw",
      "network.request.send",
    ];
    for (const who of [alice, bob]) {
      const { entries, nextBefore } = await ok<AuditBody>(t, who.apiKey, "GET", "/local-agent/audit");
      expect(entries.map((e) => e.action)).toEqual(expected);
      expect(nextBefore).toBeNull();
      for (const entry of entries) expect(entry.parties.sort()).toEqual([String(alice.userId), String(bob.userId)].sort());
    }
    const { entries } = await ok<AuditBody>(t, alice.apiKey, "GET", "/local-agent/audit");
    const accepted = entries.find((e) => e.action === "network.request.accept");
    expect(accepted).toMatchObject({
      objectType: "contact_request",
      actor: { userId: String(bob.userId), username: bob.username, credential: expect.stringMatching(/^api_key:/) },
      detail: { type: "agent", permissions: { notesAccess: { scope: "all", access: "read" }, todoAccess: { read: true } } },
      createdAt: expect.stringMatching(/Z$/),
    });
    expect(entries.find((e) => e.action === "network.permissions.withdraw")).toMatchObject({
      objectType: "contact_permission",
      objectId: `${bob.userId}:${alice.userId}`,
      detail: null,
    });

    expect((await alice.client.call("listAudit", { query: { limit: 2 } })).entries).toHaveLength(2);
    // Carol took no part: she sees none of it.
    expect((await ok<AuditBody>(t, carol.apiKey, "GET", "/local-agent/audit")).entries).toEqual([]);

    // Pages of 3 walk back through the same entries without gaps or repeats.
    const seen: string[] = [];
    let before: number | null | undefined;
    do {
      const query = `?limit=3${before ? `&before=${before}` : ""}`;
      const page = await ok<AuditBody>(t, alice.apiKey, "GET", `/local-agent/audit${query}`);
      expect(page.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.entries.map((e) => e.action));
      before = page.nextBefore;
    } while (before);
    expect(seen).toEqual(expected);

    for (const query of ["?limit=0", "?limit=201", "?limit=abc", "?before=0", "?before=x"]) {
      const response = await call(t, alice.apiKey, "GET", `/local-agent/audit${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body).toMatchObject({ error: "invalid_request" });
    }
    expect((await call(t, null, "GET", "/local-agent/audit")).status).toBe(401);
  });
});
