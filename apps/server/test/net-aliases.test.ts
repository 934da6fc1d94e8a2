import { netAliasRoutes, type RouteDefinition, routes } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ok, SQLITE_ONLY } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

interface RawAnswer {
  status: number;
  contentType: string | null;
  text: string;
}

describe("the /net alias table", () => {
  it("maps each alias onto an existing route of the same method, credential, scope and schemas", () => {
    for (const [id, alias] of Object.entries(netAliasRoutes) as [string, RouteDefinition][]) {
      expect(alias.path, id).toMatch(/^\/net(\/|$)/);
      const original = (routes as Record<string, RouteDefinition>)[alias.aliasOf ?? ""];
      expect(original, `${id} → ${alias.aliasOf}`).toBeDefined();
      if (!original) continue;
      expect(original.aliasOf).toBeUndefined();
      for (const key of ["method", "auth", "scope", "alsoRequires", "params", "query", "body", "response", "successStatuses"] as const) {
        expect(alias[key], `${id}.${key}`).toBe(original[key]);
      }
    }
  });
});

describe.each(SQLITE_ONLY)("/net aliases answer exactly like the originals (%s)", (storage) => {
  let t: TestServer;
  let serial = 0;
  const user = (name: string) => t.addUser(`${name}${++serial}`);

  async function raw(
    key: string | null,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<RawAnswer> {
    const all: Record<string, string> = { ...headers };
    if (key !== null) all.authorization = `Bearer ${key}`;
    if (body !== undefined && !all["content-type"]) all["content-type"] = "application/json";
    const response = await t.fetch(`/api/v1${path}`, {
      method,
      headers: all,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() };
  }

  /** The same request at two paths, in the same state: the answers must be the same bytes. */
  async function same(key: string | null, method: string, original: string, alias: string, body?: unknown) {
    const a = await raw(key, method, original, body);
    const b = await raw(key, method, alias, body);
    expect(b, `${method} ${alias} vs ${original}`).toEqual(a);
    return a;
  }

  /**
   * Two answers from two worlds alike but for their people, request ids and times: each value of
   * `mine` is replaced by a placeholder, and each of `theirs` by the same, before comparing.
   */
  function alike(a: RawAnswer, b: RawAnswer, mine: readonly (string | number)[], theirs: readonly (string | number)[]) {
    const scrub = (text: string, values: readonly (string | number)[]) =>
      values.reduce<string>(
        (out, value, i) => out.replace(new RegExp(`\\b${String(value)}\\b`, "g"), `<${i}>`),
        text
          .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, "<time>")
          .replace(/"requestId":\d+/g, '"requestId":<request>')
          .replace(/\(request \d+\)/g, "(request <request>)"),
      );
    expect({ ...b, text: scrub(b.text, theirs) }).toEqual({ ...a, text: scrub(a.text, mine) });
  }

  const ids = (...people: TestUser[]) => people.flatMap((p) => [p.username, p.userId]);
  const requestIdOf = (answer: RawAnswer) => (JSON.parse(answer.text) as { requestId: number }).requestId;

  beforeAll(async () => {
    t = await startTestServer({}, storage);
  });
  afterAll(() => t?.stop());

  it("reads the same network and the same pending requests", async () => {
    const [me, friend, grantor, asker] = await Promise.all([user("me"), user("friend"), user("grantor"), user("asker")]);
    await ok(t, me.apiKey, "POST", "/network/request", { to: friend.username });
    await ok(t, friend.apiKey, "POST", "/network/request", { to: me.username });
    const agent = await ok<{ requestId: number }>(t, me.apiKey, "POST", "/network/request", { to: `${grantor.username}_coo` });
    await ok(t, grantor.apiKey, "POST", "/network/accept", {
      requestId: agent.requestId,
      type: "agent",
      action: "accept",
      permissions: { notes: "read" },
    });
    await ok(t, asker.apiKey, "POST", "/network/request", { to: me.username });

    const overview = await same(me.apiKey, "GET", "/network", "/net");
    expect(JSON.parse(overview.text).network.contacts).toHaveLength(2);
    const pending = await same(me.apiKey, "GET", "/network/requests", "/net/requests");
    expect(JSON.parse(pending.text).incoming).toHaveLength(1);
    await same(me.apiKey, "GET", "/network/requests", "/net/contacts/requests");
  });

  it("refuses alike: no credential, a missing scope, bad bodies, bad ids, unknown people, conflicts", async () => {
    const [me, other] = await Promise.all([user("me"), user("other")]);
    const readOnly = await t.addUser(`ro${++serial}`, ["os.notes:read"]);
    const cases: [string, string, string, unknown][] = [
      ["POST", "/network/request", "/net/request", { to: "nobody-at-all" }],
      ["GET", "/network/requests", "/net/requests", undefined],
      ["POST", "/network/accept", "/net/accept", { requestId: 999999, type: "friend", action: "accept" }],
      ["POST", "/network/accept", "/net/contacts/accept", { requestId: 999999, type: "friend", action: "accept" }],
      ["DELETE", "/network/requests/999999", "/net/requests/999999", undefined],
      ["GET", "/network", "/net", undefined],
      ["PUT", `/network/contacts/${other.userId}/permissions`, `/net/contacts/${other.userId}/permissions`, { permissions: {} }],
      ["DELETE", `/network/contacts/${other.userId}/permissions`, `/net/contacts/${other.userId}/permissions`, undefined],
      ["DELETE", `/network/contacts/${other.userId}`, `/net/contacts/${other.userId}`, undefined],
    ];
    for (const [method, original, alias, body] of cases) {
      expect((await same(null, method, original, alias, body)).status).toBe(401);
      expect((await same("svc_sk_nonsense", method, original, alias, body)).status).toBe(401);
      expect((await same(readOnly.apiKey, method, original, alias, body)).status).toBe(403);
      const answer = await same(me.apiKey, method, original, alias, body);
      if (method !== "GET") expect(answer.status, `${method} ${original}`).toBeGreaterThanOrEqual(400);
    }
    for (const body of [{}, { to: "" }, { to: 5 }, { to: "nobody-at-all" }, { to: me.username }, "{not json", { to: "x".repeat(200) }]) {
      const answer = await same(me.apiKey, "POST", "/network/request", "/net/request", body);
      expect(answer.status).toBeGreaterThanOrEqual(400);
    }
    await same(me.apiKey, "POST", "/network/accept", "/net/accept", { requestId: "abc", type: "friend", action: "accept" });
    await same(me.apiKey, "DELETE", "/network/requests/abc", "/net/requests/abc");
    await same(me.apiKey, "DELETE", "/network/contacts/0", "/net/contacts/0");
    await same(me.apiKey, "PUT", `/network/contacts/${other.userId}/permissions`, `/net/contacts/${other.userId}/permissions`, {
      permissions: { __proto__: 1 },
    });

    // A pending request: asking again through either path is the same 409.
    await ok(t, me.apiKey, "POST", "/network/request", { to: other.username });
    const again = await same(me.apiKey, "POST", "/network/request", "/net/request", { to: other.username });
    expect([again.status, JSON.parse(again.text).error]).toEqual([409, "already_pending"]);
  });

  it("changes the same things with the same answers: request, accept, withdraw, permissions, removal", async () => {
    const [a1, b1, a2, b2] = await Promise.all([user("aa"), user("bb"), user("aa"), user("bb")]);
    const world1 = ids(a1, b1);
    const world2 = ids(a2, b2);

    // Friend request and accept.
    const sent1 = await raw(a1.apiKey, "POST", "/network/request", { to: b1.username });
    const sent2 = await raw(a2.apiKey, "POST", "/net/request", { to: b2.username });
    alike(sent1, sent2, world1, world2);
    const accepted1 = await raw(b1.apiKey, "POST", "/network/accept", { requestId: requestIdOf(sent1), type: "friend", action: "accept" });
    const accepted2 = await raw(b2.apiKey, "POST", "/net/accept", { requestId: requestIdOf(sent2), type: "friend", action: "accept" });
    alike(accepted1, accepted2, world1, world2);
    expect(accepted1.status).toBe(200);

    // Agent request, accepted with permissions; then permissions changed and withdrawn.
    const agent1 = await raw(a1.apiKey, "POST", "/network/request", { to: `${b1.username}_coo` });
    const agent2 = await raw(a2.apiKey, "POST", "/net/request", { to: `${b2.username}_coo` });
    alike(agent1, agent2, world1, world2);
    const grant = { requestId: 0, type: "agent", action: "accept", permissions: { notes: "read" } };
    const ga1 = await raw(b1.apiKey, "POST", "/network/accept", { ...grant, requestId: requestIdOf(agent1) });
    const ga2 = await raw(b2.apiKey, "POST", "/net/contacts/accept", { ...grant, requestId: requestIdOf(agent2) });
    alike(ga1, ga2, world1, world2);

    const put = { permissions: { notes: "write", calendar: { read: "free_busy" } } };
    alike(
      await raw(b1.apiKey, "PUT", `/network/contacts/${a1.userId}/permissions`, put),
      await raw(b2.apiKey, "PUT", `/net/contacts/${a2.userId}/permissions`, put),
      world1,
      world2,
    );
    alike(await raw(a1.apiKey, "GET", "/network"), await raw(a2.apiKey, "GET", "/net"), world1, world2);
    const withdrawn1 = await raw(b1.apiKey, "DELETE", `/network/contacts/${a1.userId}/permissions`);
    const withdrawn2 = await raw(b2.apiKey, "DELETE", `/net/contacts/${a2.userId}/permissions`);
    alike(withdrawn1, withdrawn2, world1, world2);
    expect(withdrawn1.status).toBe(200);

    // Removing the contact.
    const removed1 = await raw(a1.apiKey, "DELETE", `/network/contacts/${b1.userId}`);
    const removed2 = await raw(a2.apiKey, "DELETE", `/net/contacts/${b2.userId}`);
    alike(removed1, removed2, world1, world2);
    expect(removed1.status).toBe(200);
    alike(await raw(a1.apiKey, "GET", "/network"), await raw(a2.apiKey, "GET", "/net"), world1, world2);

    // Withdrawing a request.
    const w1 = await raw(a1.apiKey, "POST", "/network/request", { to: b1.username });
    const w2 = await raw(a2.apiKey, "POST", "/net/request", { to: b2.username });
    const gone1 = await raw(a1.apiKey, "DELETE", `/network/requests/${requestIdOf(w1)}`);
    const gone2 = await raw(a2.apiKey, "DELETE", `/net/requests/${requestIdOf(w2)}`);
    alike(gone1, gone2, world1, world2);
    expect(gone1.status).toBe(200);
  });

  it("sends a message at /net/message exactly as POST /agent/message does (refusals, a delivery, the same conversation)", async () => {
    const [a1, b1, a2, b2] = await Promise.all([user("ma"), user("mb"), user("ma"), user("mb")]);
    // Names only: these answers carry no user ids, and small ids would match inside the placeholders.
    const world1 = [a1.username, b1.username];
    const world2 = [a2.username, b2.username];
    const scrubIds = (answer: RawAnswer) => ({
      ...answer,
      text: answer.text.replace(/"(conversationId|messageId)":\d+/g, '"$1":<id>').replace(/"elapsedMs":[\d.]+/, '"elapsedMs":<ms>'),
    });
    // Strangers are delivered alike (held as message requests); a body past the limit is refused alike.
    alike(
      scrubIds(await raw(a1.apiKey, "POST", "/agent/message", { to: b1.username, message: "hi" })),
      scrubIds(await raw(a2.apiKey, "POST", "/net/message", { to: b2.username, message: "hi" })),
      world1,
      world2,
    );
    // Their message requests, listed and ignored at either path, alike (ids aside).
    const scrubAll = (answer: RawAnswer) => ({
      ...answer,
      text: answer.text.replace(/"(id|userId|senderId|conversationId|requestId)":"?\d+"?/g, '"$1":<id>'),
    });
    const requestOf = (answer: RawAnswer) => (JSON.parse(answer.text) as { requests: { id: number }[] }).requests[0]?.id;
    const listed1 = await raw(b1.apiKey, "GET", "/conversations/requests");
    const listed2 = await raw(b2.apiKey, "GET", "/net/message/requests");
    expect(requestOf(listed1)).toBeGreaterThan(0);
    alike(scrubAll(listed1), scrubAll(listed2), world1, world2);
    alike(
      scrubAll(await raw(b1.apiKey, "POST", `/conversations/requests/${requestOf(listed1)}/ignore`)),
      scrubAll(await raw(b2.apiKey, "POST", `/net/message/requests/${requestOf(listed2)}/ignore`)),
      world1,
      world2,
    );
    await same(b1.apiKey, "POST", "/conversations/requests/999999/block", "/net/message/requests/999999/block");
    await same(a1.apiKey, "POST", "/agent/message", "/net/message", { to: b1.username, message: "x".repeat(4001) });
    await same(null, "POST", "/agent/message", "/net/message", { to: b1.username, message: "hi" });

    // Connected, both deliver into the pair's one conversation, with the same answer shape.
    for (const [from, to] of [
      [a1, b1],
      [a2, b2],
    ] as const) {
      const sent = await raw(from.apiKey, "POST", "/network/request", { to: to.username });
      await raw(to.apiKey, "POST", "/network/accept", { requestId: requestIdOf(sent), type: "friend", action: "accept" });
    }
    const original = await raw(a1.apiKey, "POST", "/agent/message", { to: b1.username, message: "lunch at noon?" });
    const viaAlias = await raw(a2.apiKey, "POST", "/net/message", { to: b2.username, message: "lunch at noon?" });
    expect(original.status).toBe(200);
    alike(scrubIds(original), scrubIds(viaAlias), world1, world2);
    const again = await raw(a2.apiKey, "POST", "/net/message", { to: b2.username, message: "or one?" });
    const conversationOf = (answer: RawAnswer) => (JSON.parse(answer.text) as { conversationId: number }).conversationId;
    expect(conversationOf(again)).toBe(conversationOf(viaAlias));
  });

  describe("POST /net/contacts/request", () => {
    interface NetRequestAnswer {
      success?: boolean;
      status?: string;
      requestId?: number;
      type?: string;
      error?: string;
    }
    const netRequest = async (who: TestUser, to: string) => {
      const answer = await raw(who.apiKey, "POST", "/net/contacts/request", { to });
      return { status: answer.status, body: JSON.parse(answer.text) as NetRequestAnswer };
    };

    it("answers requested, then approved when the other side asks back (a reciprocal request is accepted at once)", async () => {
      const [alice, bob] = await Promise.all([user("alice"), user("bob")]);
      const first = await netRequest(alice, bob.username);
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ success: true, status: "requested", type: "friend" });
      const repeat = await netRequest(alice, bob.username);
      expect([repeat.status, repeat.body.error]).toEqual([409, "already_pending"]);

      const back = await netRequest(bob, alice.username);
      expect(back.body).toMatchObject({ success: true, status: "approved", requestId: first.body.requestId });
      const contacts = (
        await ok<{ network: { contacts: { username: string; direction: string; friend: boolean }[] } }>(t, alice.apiKey, "GET", "/net")
      ).network.contacts;
      expect(contacts).toEqual([expect.objectContaining({ username: bob.username, direction: "mutual", friend: true })]);
      const connected = await netRequest(alice, bob.username);
      expect([connected.status, connected.body.error]).toEqual([409, "already_connected"]);
    });

    it("asks for agent access with <username>_coo, which stays requested until the other side chooses permissions", async () => {
      const [alice, bob] = await Promise.all([user("alice"), user("bob")]);
      expect((await netRequest(alice, `${bob.username}_coo`)).body).toMatchObject({ status: "requested", type: "agent" });
      // Bob asking alice's agent is not the same request turned round: it waits too.
      expect((await netRequest(bob, `${alice.username}_coo`)).body).toMatchObject({ status: "requested", type: "agent" });
      expect((await netRequest(alice, `${bob.username}_coo`)).body.error).toBe("already_pending");
    });

    it("refuses like POST /network/request does", async () => {
      const alice = await user("alice");
      for (const to of [alice.username, "nobody-at-all", ""]) {
        const original = await raw(alice.apiKey, "POST", "/network/request", { to });
        const net = await raw(alice.apiKey, "POST", "/net/contacts/request", { to });
        expect(net).toEqual(original);
        expect(net.status).toBeGreaterThanOrEqual(400);
      }
      expect((await raw(null, "POST", "/net/contacts/request", { to: "x" })).status).toBe(401);
    });
  });
});
