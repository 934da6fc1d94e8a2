import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindEarlierRedemptions } from "../src/db/migrations/0030-link-born-contacts";
import { call, grantAgentAccess, ok, registerBridge, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { guestCall, type ShareLinkBody, sendGuest } from "./share-fixture";

const HOUR = 3_600_000;

describe.each(storages("share links suite"))("share links (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let serial = 0;
  let folderId: number;

  const create = async (who: TestUser, body: Record<string, unknown> = {}) =>
    (await ok<{ shareLink: ShareLinkBody }>(t, who.apiKey, "POST", "/os/share", { requireSignIn: false, ...body }, [201])).shareLink;
  const list = async (who: TestUser, query = "") =>
    (await ok<{ links: ShareLinkBody[] }>(t, who.apiKey, "GET", `/os/share/list${query}`)).links;

  beforeAll(async () => {
    t = await startTestServer({ guestLocalWaitMs: 1500 }, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await alice.client.call("init");
    folderId = (await alice.client.call("createFolder", { body: { name: "Public" } })).folder.id;
  });
  afterAll(() => t?.stop());

  it("creates a link with the supplement's defaults and a 10-character token", async () => {
    const response = await call<{ shareLink: ShareLinkBody }>(t, alice.apiKey, "POST", "/os/share", {});
    expect(response.status).toBe(201);
    const link = response.body.shareLink;
    expect(link.token).toMatch(/^[A-Za-z0-9]{10}$/);
    expect(link).toMatchObject({
      target: "agent",
      scope: "all",
      access: "read",
      notesAccess: "read",
      label: "",
      requireSignIn: true,
      isActive: true,
      capabilities: { notes: "read", calendar: "none", email: false, todos: false, tools: [] },
      analytics: { uniqueVisitors: 0, totalConversations: 0, totalMessages: 0, visitors: 0, sessions: 0, messages: 0 },
    });
    expect(link.url).toBe(`${t.server.url}/a/${link.token}`);
    expect(link.agentUrl).toContain(`/api/chat/guest-v04?token=${link.token}`);
    // 30 days by default.
    const days = (Date.parse(link.expiresAt as string) - Date.parse(link.createdAt)) / 86_400_000;
    expect(Math.round(days)).toBe(30);
    const never = await create(alice, { expiresIn: "never", label: "forever" });
    expect(never.expiresAt).toBeNull();
    // Tokens are drawn fresh each time.
    const tokens = new Set(await Promise.all(Array.from({ length: 20 }, async () => (await create(alice)).token)));
    expect(tokens.size).toBe(20);
  });

  it("refuses bad input with a clear 4xx", async () => {
    const bad = async (body: unknown, status = 400) => expect((await call(t, alice.apiKey, "POST", "/os/share", body)).status).toBe(status);
    await bad({ expiresIn: "2y" });
    await bad({ scope: "folders" });
    await bad({ target: "note" });
    await bad({ scope: "nope" });
    await bad({ label: "x".repeat(300) });
    await bad({ target: "note", noteId: 999_999 }, 404);
    await bad({ scope: "folders", folderIds: [999_999] }, 404);
    // Someone else's folder is the same 404 as none.
    const bobs = (await bob.client.call("createFolder", { body: { name: "Bob's" } })).folder.id;
    await bad({ scope: "folders", folderIds: [bobs] }, 404);
    const note = (await alice.client.call("createNote", { body: { title: "N", content: "x" } })).result.note.id;
    await bad({ target: "note", noteId: note, notesAccess: "write" }, 400);
    expect((await create(alice, { target: "note", noteId: note })).scope).toBe("note_only");
  });

  it("lists by status, newest first, within the limit; PATCH changes only what it is asked", async () => {
    const owner = await t.addUser(`carol${++serial}`);
    const a = await create(owner, { label: "a", scope: "all" });
    const b = await create(owner, { label: "b", todos: true, expiresIn: "7d" });
    expect((await list(owner)).map((l) => l.label)).toEqual(["b", "a"]);
    expect((await list(owner, "?limit=1")).map((l) => l.label)).toEqual(["b"]);
    expect((await call(t, owner.apiKey, "GET", "/os/share/list?limit=51")).status).toBe(400);
    expect((await call(t, owner.apiKey, "GET", "/os/share/list?status=maybe")).status).toBe(400);

    const patched = await ok<{ shareLink: ShareLinkBody }>(t, owner.apiKey, "PATCH", `/os/share/${b.id}`, { label: "renamed" });
    expect(patched.shareLink).toMatchObject({ label: "renamed", expiresAt: b.expiresAt, capabilities: { todos: true }, token: b.token });
    const longer = await ok<{ shareLink: ShareLinkBody }>(t, owner.apiKey, "PATCH", `/os/share/${b.id}`, {
      expiresIn: "never",
      email: true,
      tools: ["search_notes"],
      identity: false,
    });
    expect(longer.shareLink).toMatchObject({ label: "renamed", expiresAt: null, capabilities: { email: true, tools: ["search_notes"] } });
    expect((await call(t, owner.apiKey, "PATCH", `/os/share/${b.id}`, { token: "x" })).status).toBe(400);
    // Another owner's link is a 404 on every route.
    expect((await call(t, bob.apiKey, "PATCH", `/os/share/${b.id}`, { label: "mine" })).status).toBe(404);
    expect((await call(t, bob.apiKey, "DELETE", `/os/share/${b.id}`)).status).toBe(404);

    const revoked = await ok<{ revokedAt: string }>(t, owner.apiKey, "DELETE", `/os/share/${a.id}`);
    expect(revoked.revokedAt).toBeTruthy();
    expect((await list(owner)).map((l) => l.label)).toEqual(["renamed"]);
    expect((await list(owner, "?status=revoked")).map((l) => [l.label, l.isActive])).toEqual([["a", false]]);
    expect(await list(owner, "?status=all")).toHaveLength(2);
    expect((await call(t, owner.apiKey, "PATCH", `/os/share/${a.id}`, { expiresIn: "7d" })).status).toBe(409);
    // Each change is in the owner's audit log, without the token.
    const audit = await ok<{ entries: { action: string; objectId: string }[] }>(t, owner.apiKey, "GET", "/local-agent/audit");
    const actions = audit.entries.filter((e) => e.action.startsWith("share.link.")).map((e) => `${e.action}:${e.objectId}`);
    expect(actions.sort()).toEqual(
      [
        `share.link.create:${a.id}`,
        `share.link.create:${b.id}`,
        `share.link.update:${b.id}`,
        `share.link.update:${b.id}`,
        `share.link.revoke:${a.id}`,
      ].sort(),
    );
    expect(JSON.stringify(audit)).not.toContain(b.token);
  });

  it("needs the share scopes", async () => {
    const reader = await t.addUser(`reader${++serial}`, ["os.share:read"]);
    expect((await call(t, reader.apiKey, "POST", "/os/share", {})).status).toBe(403);
    expect((await call(t, reader.apiKey, "GET", "/os/share/list")).status).toBe(200);
    expect((await call(t, null, "GET", "/os/share/list")).status).toBe(401);
  });

  it("refuses an expired or revoked link at once everywhere", async () => {
    const owner = await t.addUser(`dave${++serial}`);
    const visitor = await t.addUser(`erin${++serial}`);
    const expiring = await create(owner, { expiresIn: "1h", localAgent: true });
    const revoking = await create(owner, { expiresIn: "never", localAgent: false });

    // Both work now: page, meta, message (and a session to continue), redemption.
    const sessions: Record<string, string> = {};
    for (const link of [expiring, revoking]) {
      expect((await guestCall(t, "GET", `/a/${link.token}`)).status).toBe(200);
      expect((await guestCall(t, "GET", `/api/chat/guest-v04?token=${link.token}&meta=true`)).status).toBe(200);
    }
    // A locally answered link: the message waits for the owner's machine, which answers it.
    const waiting = sendGuest(t, { token: expiring.token, message: "hello there" });
    let pending: { messageId: number }[] = [];
    for (let i = 0; i < 50 && pending.length === 0; i++) {
      pending = (await ok<{ messages: { messageId: number }[] }>(t, owner.apiKey, "GET", "/local-agent/guest-messages")).messages;
      if (pending.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(pending).toHaveLength(1);
    await ok(t, owner.apiKey, "POST", "/local-agent/guest-messages/reply", { messageId: pending[0]?.messageId, body: "Hi from my laptop" });
    const answered = await waiting;
    expect(answered.body).toMatchObject({ response: "Hi from my laptop", answeredBy: "local" });
    sessions[expiring.token] = answered.body.sessionKey;
    sessions[revoking.token] = (await sendGuest(t, { token: revoking.token, message: "hi" })).body.sessionKey;

    // A message left pending when the link dies: the bridge no longer sees it nor may answer it.
    const stranded = sendGuest(t, { token: expiring.token, message: "are you there?", sessionKey: sessions[expiring.token] });
    for (let i = 0; i < 50 && pending.length <= 1; i++) {
      const now = (await ok<{ messages: { messageId: number }[] }>(t, owner.apiKey, "GET", "/local-agent/guest-messages")).messages;
      if (now.length > 0) pending = [...pending, ...now];
      else await new Promise((r) => setTimeout(r, 50));
    }
    const strandedId = pending[1]?.messageId;
    expect(strandedId).toBeDefined();

    // The clock passes the hour; the other link is revoked.
    t.server.context.clock.advance(HOUR + 1000);
    await ok(t, owner.apiKey, "DELETE", `/os/share/${revoking.id}`);

    for (const link of [expiring, revoking]) {
      const page = await guestCall<string>(t, "GET", `/a/${link.token}`);
      expect(page.status).toBe(404);
      expect(page.body).toContain("expired or was revoked");
      expect((await guestCall(t, "GET", `/api/chat/guest-v04?token=${link.token}&meta=true`)).body).toMatchObject({
        error: "share_link_not_found",
      });
      const fresh = await sendGuest(t, { token: link.token, message: "hello?" });
      expect([fresh.status, fresh.body.error]).toEqual([404, "share_link_not_found"]);
      const continued = await sendGuest(t, { token: link.token, message: "again", sessionKey: sessions[link.token] });
      expect([continued.status, continued.body.error]).toEqual([404, "share_link_not_found"]);
      const connect = await call(t, visitor.apiKey, "POST", "/network/connect", { shareToken: link.token });
      expect(connect.status).toBe(404);
    }
    expect((await ok<{ messages: unknown[] }>(t, owner.apiKey, "GET", "/local-agent/guest-messages")).messages).toEqual([]);
    expect((await ok<{ messages: unknown[] }>(t, owner.apiKey, "POST", "/local-agent/guest-messages", {})).messages).toEqual([]);
    const late = await call(t, owner.apiKey, "POST", "/local-agent/guest-messages/reply", { messageId: strandedId, body: "too late" });
    expect(late.status).toBe(404);
    // The guest who was waiting is refused too, not answered by a link that is gone.
    expect((await stranded).status).toBe(404);
    // Listing shows them as inactive.
    expect((await list(owner, "?status=all")).every((l) => !l.isActive)).toBe(true);
  });

  it("lets the owner's bridge answer guests, and falls back to the server's agent when it does not in time", async () => {
    const owner = await t.addUser(`ivan${++serial}`);
    const stranger = await t.addUser(`judy${++serial}`);
    const bridge = await registerBridge(t, owner, "laptop");
    await owner.client.call("init");
    const link = await create(owner, { localAgent: true, expiresIn: "never", label: "Ask me" });
    const pendingFor = async (token: string) =>
      (
        await ok<{ messages: { messageId: number; content: string; shareToken: string; linkLabel: string; history: unknown[] }[] }>(
          t,
          token,
          "GET",
          "/local-agent/guest-messages",
        )
      ).messages;

    // Answered by the bridge, with its device token.
    const waiting = sendGuest(t, { token: link.token, message: "Are you free on Friday?", visitorName: "Kim" });
    let pending: Awaited<ReturnType<typeof pendingFor>> = [];
    for (let i = 0; i < 50 && pending.length === 0; i++) {
      pending = await pendingFor(bridge.deviceToken);
      if (pending.length === 0) await new Promise((r) => setTimeout(r, 40));
    }
    expect(pending[0]).toMatchObject({ content: "Are you free on Friday?", shareToken: link.token, linkLabel: "Ask me", history: [] });
    // Nobody else sees or answers it.
    expect(await pendingFor(stranger.apiKey)).toEqual([]);
    const foreign = await call(t, stranger.apiKey, "POST", "/local-agent/guest-messages/reply", {
      messageId: pending[0]?.messageId,
      body: "x",
    });
    expect(foreign.status).toBe(404);
    await ok(t, bridge.deviceToken, "POST", "/local-agent/guest-messages/reply", {
      messageId: pending[0]?.messageId,
      body: "Friday works.",
    });
    const answered = await waiting;
    expect(answered.body).toMatchObject({ response: "Friday works.", answeredBy: "local" });
    const twice = await call(t, bridge.deviceToken, "POST", "/local-agent/guest-messages/reply", {
      messageId: pending[0]?.messageId,
      body: "x",
    });
    expect([twice.status, (twice.body as { error: string }).error]).toEqual([409, "not_pending"]);

    // Nobody answers: after the wait the server's agent does, and a late reply is refused.
    const unanswered = await sendGuest(t, { token: link.token, message: "hello?", sessionKey: answered.body.sessionKey });
    expect(unanswered.status).toBe(200);
    expect(unanswered.body.answeredBy).toBe("server");
    expect(unanswered.body.response.length).toBeGreaterThan(0);
    const transcript = await ok<{ messages: { id: number; role: string; answeredBy: string | null }[] }>(
      t,
      owner.apiKey,
      "GET",
      `/os/network/conversations/${answered.body.sessionId}`,
    );
    expect(transcript.messages.map((m) => [m.role, m.answeredBy])).toEqual([
      ["user", null],
      ["assistant", "local"],
      ["user", null],
      ["assistant", "server"],
    ]);
    const late = await call(t, owner.apiKey, "POST", "/local-agent/guest-messages/reply", {
      messageId: transcript.messages[2]?.id,
      body: "sorry",
    });
    expect(late.status).toBe(409);
    expect(await pendingFor(owner.apiKey)).toEqual([]);
  });

  it("answers a stream's early refusals as plain JSON errors", async () => {
    const small = await startTestServer({ guestMessageLimit: 1 }, storage);
    try {
      const owner = await small.addUser("owner");
      const link = (await ok<{ shareLink: ShareLinkBody }>(small, owner.apiKey, "POST", "/os/share", { requireSignIn: false }, [201]))
        .shareLink;
      const first = await sendGuest(small, { token: link.token, message: "hi" });
      const limited = await sendGuest(small, { token: link.token, message: "hi", stream: true, sessionKey: first.body.sessionKey });
      expect([limited.status, limited.body.error]).toEqual([429, "message_limit"]);
      const gone = await sendGuest(small, { token: "ZZZZZZZZZZ", message: "hi", stream: true });
      expect([gone.status, gone.body.error]).toEqual([404, "share_link_not_found"]);
    } finally {
      await small.stop();
    }
  });

  it("rate limits guessing per address, and attempts on one token from anywhere", async () => {
    const limited = await startTestServer(
      { shareFailuresPerMinute: 5, shareAttemptsPerMinute: 30, shareTokenAttemptsPerMinute: 12 },
      storage,
    );
    try {
      const owner = await limited.addUser("owner");
      const link = (await ok<{ shareLink: ShareLinkBody }>(limited, owner.apiKey, "POST", "/os/share", { requireSignIn: false }, [201]))
        .shareLink;
      // Guessing: five wrong tokens are 404, then the address waits, even for the right token.
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) {
        statuses.push((await guestCall(limited, "GET", `/api/chat/guest-v04?token=Guess${String(i).padStart(5, "0")}&meta=true`)).status);
      }
      expect(statuses.slice(0, 5)).toEqual([404, 404, 404, 404, 404]);
      expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
      const blocked = await guestCall(limited, "GET", `/api/chat/guest-v04?token=${link.token}&meta=true`);
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await guestCall(limited, "GET", `/a/${link.token}`)).status).toBe(429);
      expect((await call(limited, owner.apiKey, "POST", "/network/connect", { shareToken: "AAAAAAAAAA" })).status).toBe(429);

      // One token takes at most its own budget, from any address.
      const fresh = await startTestServer({ shareTokenAttemptsPerMinute: 3, shareAttemptsPerMinute: 100 }, storage);
      try {
        const o = await fresh.addUser("o");
        const l = (await ok<{ shareLink: ShareLinkBody }>(fresh, o.apiKey, "POST", "/os/share", { requireSignIn: false }, [201])).shareLink;
        const perToken: number[] = [];
        for (let i = 0; i < 5; i++) perToken.push((await guestCall(fresh, "GET", `/api/chat/guest-v04?token=${l.token}&meta=true`)).status);
        expect(perToken).toEqual([200, 200, 200, 429, 429]);
        // Another token is not held back by it.
        const other = (await ok<{ shareLink: ShareLinkBody }>(fresh, o.apiKey, "POST", "/os/share", { requireSignIn: false }, [201]))
          .shareLink;
        expect((await guestCall(fresh, "GET", `/api/chat/guest-v04?token=${other.token}&meta=true`)).status).toBe(200);
      } finally {
        await fresh.stop();
      }
    } finally {
      await limited.stop();
    }
  });

  it("lists a visitor once however many sessions they had, and counts a session's questions and answers", async () => {
    const owner = await t.addUser(`ivy${++serial}`);
    const link = await create(owner, { label: "Desk", expiresIn: "never" });
    // The same browser (address and user agent) opens two conversations: one visitor.
    const first = await sendGuest(t, { token: link.token, message: "one question" });
    expect(first.status).toBe(200);
    expect((await sendGuest(t, { token: link.token, message: "a new conversation" })).status).toBe(200);

    const { network } = await ok<{ network: { visitors: Record<string, unknown>[]; shareLinks: ShareLinkBody[] } }>(
      t,
      owner.apiKey,
      "GET",
      "/os/network",
    );
    expect(network.visitors).toHaveLength(1);
    expect(network.visitors[0]).toMatchObject({ shareToken: link.token, linkLabel: "Desk", sessions: 2, messages: 4 });
    expect(network.shareLinks[0]?.analytics).toMatchObject({ visitors: 1, sessions: 2, messages: 4 });

    const { conversations } = await ok<{ conversations: { sessionId: string; messageCount: number }[] }>(
      t,
      owner.apiKey,
      "GET",
      `/os/network/conversations?shareToken=${link.token}`,
    );
    // One question and its answer: two messages.
    expect(conversations.find((c) => c.sessionId === first.body.sessionId)?.messageCount).toBe(2);
  });

  it("shows links, visitors and guest conversations to their owner only", async () => {
    const owner = await t.addUser(`frank${++serial}`);
    const link = await create(owner, { label: "Portfolio", expiresIn: "never" });
    const first = await sendGuest(t, { token: link.token, message: "hello", visitorName: "Grace" });
    expect(first.status).toBe(200);
    await sendGuest(t, { token: link.token, message: "thanks", sessionKey: first.body.sessionKey });
    await sendGuest(t, { token: link.token, message: "hi" }, { "user-agent": "another browser" });

    const overview = await ok<{
      network: { shareLinks: ShareLinkBody[]; visitors: Record<string, unknown>[]; summary: Record<string, number> };
    }>(t, owner.apiKey, "GET", "/os/network");
    expect(overview.network.shareLinks).toHaveLength(1);
    // Messages count the guests' and the answers: 3 questions, 3 answers.
    expect(overview.network.shareLinks[0]?.analytics).toMatchObject({ sessions: 2, messages: 6, visitors: 2, totalConversations: 2 });
    expect(overview.network.visitors).toHaveLength(2);
    expect(overview.network.visitors[0]).toMatchObject({ shareToken: link.token, linkLabel: "Portfolio" });
    expect(overview.network.summary).toMatchObject({ totalLinks: 1, activeLinks: 1, totalConversations: 2, totalMessages: 6 });

    const listing = await ok<{ conversations: Record<string, unknown>[]; limit: number; offset: number }>(
      t,
      owner.apiKey,
      "GET",
      `/os/network/conversations?shareToken=${link.token}`,
    );
    expect(listing).toMatchObject({ limit: 20, offset: 0 });
    expect(listing.conversations).toHaveLength(2);
    const grace = listing.conversations.find((c) => c.guestName === "Grace") as Record<string, unknown>;
    expect(grace).toMatchObject({
      sessionId: first.body.sessionId,
      shareToken: link.token,
      linkLabel: "Portfolio",
      messageCount: 4,
      lastRole: "assistant",
      visitor: { name: "Grace", userId: null },
    });
    expect(
      (await ok<{ conversations: unknown[] }>(t, owner.apiKey, "GET", "/os/network/conversations?limit=1&offset=1")).conversations,
    ).toHaveLength(1);

    const transcript = await ok<{ session: { sessionId: string }; messages: { role: string; content: string }[] }>(
      t,
      owner.apiKey,
      "GET",
      `/os/network/conversations/${first.body.sessionId}`,
    );
    expect(transcript.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(transcript.messages[0]?.content).toBe("hello");
    // Someone else: nothing listed, the transcript a 404, the token filter finds nothing.
    expect((await call(t, bob.apiKey, "GET", `/os/network/conversations/${first.body.sessionId}`)).status).toBe(404);
    expect(
      (await ok<{ conversations: unknown[] }>(t, bob.apiKey, "GET", `/os/network/conversations?shareToken=${link.token}`)).conversations,
    ).toEqual([]);
    // The session key is the guest's, not the owner's listing's: it is never shown.
    expect(JSON.stringify(transcript)).not.toContain(first.body.sessionKey);
  });

  it("POST /network/connect makes the caller a contact with what the link allows", async () => {
    const owner = await t.addUser(`gina${++serial}`);
    const visitor = await t.addUser(`hank${++serial}`);
    const link = await create(owner, { scope: "folders", folderIds: [], expiresIn: "never" }).catch(() => null);
    expect(link).toBeNull();
    const ownerFolder = (await owner.client.call("createFolder", { body: { name: "Shared" } })).folder.id;
    const folderLink = await create(owner, { scope: "folders", folderIds: [ownerFolder], todos: true });
    const connected = await ok<{ status: string; contact: { userId: string }; permissions: Record<string, unknown> }>(
      t,
      visitor.apiKey,
      "POST",
      "/network/connect",
      { shareToken: folderLink.token },
    );
    expect(connected).toMatchObject({
      status: "connected",
      contact: { userId: String(owner.userId) },
      permissions: { notesAccess: { scope: "folders", folderIds: [ownerFolder], access: "read" }, todosAccess: { read: true } },
    });
    const again = await ok<{ status: string }>(t, visitor.apiKey, "POST", "/network/connect", { shareToken: folderLink.token });
    expect(again.status).toBe("already_connected");
    const contacts = (
      await ok<{ network: { contacts: { userId: string; direction: string; yourPermissionsToThem: unknown }[] } }>(
        t,
        owner.apiKey,
        "GET",
        "/network",
      )
    ).network.contacts;
    expect(contacts.find((c) => c.userId === String(visitor.userId))).toMatchObject({ direction: "mutual" });
    expect((await call(t, owner.apiKey, "POST", "/network/connect", { shareToken: folderLink.token })).status).toBe(400);
    expect((await call(t, visitor.apiKey, "POST", "/network/connect", { shareToken: "nope" })).status).toBe(404);
    expect((await call(t, visitor.apiKey, "POST", "/network/connect", {})).status).toBe(400);
    expect(folderId).toBeGreaterThan(0);
  });

  it("a contact made from a link reaches no more than the link's guests, and ends with the link", async () => {
    const owner = await t.addUser(`kate${++serial}`);
    await owner.client.call("init");
    const open = (await owner.client.call("createFolder", { body: { name: "Open" } })).folder.id;
    await owner.client.call("createNote", { body: { title: "Alpha plan", content: "The alpha launch is in March.", folderId: open } });
    await owner.client.call("accumulate", {
      body: { texts: [{ title: "USER.md", content: "The owner's maiden name is Smithereen.", folder: "Memory/Self" }] },
    });
    const ask = (who: TestUser, message: string) =>
      call<{ response: string; error?: string }>(t, who.apiKey, "POST", "/agent/message", { to: `${owner.username}_coo`, message });
    const contactIds = async () =>
      (await ok<{ network: { contacts: { userId: string }[] } }>(t, owner.apiKey, "GET", "/network")).network.contacts.map((c) => c.userId);
    const connect = async (who: TestUser, link: ShareLinkBody) =>
      ok<{ status: string; permissions: Record<string, unknown> }>(t, who.apiKey, "POST", "/network/connect", { shareToken: link.token });

    // A `scope: all` link: the link's folders, never the agent's Memory (its guests never get it).
    const revoked = await create(owner, { scope: "all", expiresIn: "never" });
    const liam = await t.addUser(`liam${++serial}`);
    expect((await connect(liam, revoked)).status).toBe("connected");
    const alpha = await ask(liam, "When is the alpha launch?");
    expect([alpha.status, alpha.body.response]).toEqual([200, expect.stringContaining("March")]);
    for (const question of ["What is the maiden name?", "Smithereen", "What does USER say?"]) {
      const answer = await ask(liam, question);
      expect(answer.status).toBe(200);
      expect(answer.body.response).not.toContain("Smithereen");
    }
    // Nor more than a guest in any other way: no grant to the owner's machine, which needs the handshake.
    const grant = await call<{ error: string }>(t, liam.apiKey, "POST", "/local-agent/grants", {
      target: { kind: "person_default_runtime", principalId: String(owner.userId) },
    });
    expect([grant.status, grant.body.error]).toEqual([403, "agent_permission_required"]);
    expect(await contactIds()).toContain(String(liam.userId));

    // Revoked: the next request is refused, and the contact is gone from the listing.
    await ok(t, owner.apiKey, "DELETE", `/os/share/${revoked.id}`);
    const afterRevoke = await ask(liam, "When is the alpha launch?");
    expect([afterRevoke.status, afterRevoke.body.error]).toEqual([403, "agent_permission_required"]);
    expect(await contactIds()).not.toContain(String(liam.userId));

    // Expired: refused at once, before maintenance sweeps the rows away.
    const expiring = await create(owner, { scope: "all", expiresIn: "1h" });
    const mona = await t.addUser(`mona${++serial}`);
    await connect(mona, expiring);
    expect((await ask(mona, "When is the alpha launch?")).status).toBe(200);
    t.server.context.clock.advance(HOUR + 1000);
    const afterExpiry = await ask(mona, "When is the alpha launch?");
    expect([afterExpiry.status, afterExpiry.body.error]).toEqual([403, "agent_permission_required"]);
    expect(await contactIds()).not.toContain(String(mona.userId));
    await t.server.context.maintenance.runAll();
    const left = await t.server.context.db
      .selectFrom("contact_permissions")
      .select("grantee_id")
      .where("share_link_id", "=", expiring.id)
      .execute();
    expect(left).toEqual([]);

    // The owner's own decision through the handshake stands on its own, beyond the link's life.
    const lasting = await create(owner, { scope: "all", expiresIn: "never" });
    const nick = await t.addUser(`nick${++serial}`);
    await connect(nick, lasting);
    await grantAgentAccess(t, nick, owner, { notesAccess: { scope: "all", access: "read" } });
    await ok(t, owner.apiKey, "DELETE", `/os/share/${lasting.id}`);
    const kept = await ask(nick, "When is the alpha launch?");
    expect([kept.status, kept.body.response]).toEqual([200, expect.stringContaining("March")]);
    // A link redeemed later never replaces it.
    const later = await create(owner, { scope: "folders", folderIds: [open], expiresIn: "never" });
    expect((await connect(nick, later)).permissions).toEqual({ notesAccess: { scope: "all", access: "read" } });
    await ok(t, owner.apiKey, "DELETE", `/os/share/${later.id}`);
    expect((await ask(nick, "When is the alpha launch?")).status).toBe(200);
  });

  it("scope all reaches the notes at the root, where a note without a folder lives; folder links and Memory stay out (issue #26, point 6)", async () => {
    const owner = await t.addUser(`quinn${++serial}`);
    await owner.client.call("init");
    const open = (await owner.client.call("createFolder", { body: { name: "Open" } })).folder.id;
    // POST /os/notes without a folder puts the note at the root, as the desktop's New note does.
    const rootNote = (await owner.client.call("createNote", { body: { title: "Harbour schedule", content: "The ferry leaves at 7:40." } }))
      .result.note;
    expect(rootNote.folderId).toBeNull();
    await owner.client.call("createNote", {
      body: { title: "Open plan", content: "The ferry tickets are in the drawer.", folderId: open },
    });
    await owner.client.call("accumulate", {
      body: { texts: [{ title: "USER.md", content: "The ferry password is Sandpiper.", folder: "Memory/Self" }] },
    });
    const everything = await create(owner, { scope: "all" });
    const folderOnly = await create(owner, { scope: "folders", folderIds: [open] });

    const all = await sendGuest(t, { token: everything.token, message: "When does the ferry leave?" });
    expect(all.status).toBe(200);
    expect(all.body.response).toContain("7:40");
    expect(all.body.response).not.toContain("Sandpiper");

    const narrow = await sendGuest(t, { token: folderOnly.token, message: "When does the ferry leave?" });
    expect(narrow.status).toBe(200);
    expect(narrow.body.response).toContain("drawer");
    expect(narrow.body.response).not.toContain("7:40");
    expect(narrow.body.response).not.toContain("Sandpiper");
  });

  it("binds to their link the contacts that redemptions made before migration 0030", async () => {
    const owner = await t.addUser(`olga${++serial}`);
    const visitor = await t.addUser(`paul${++serial}`);
    const friend = await t.addUser(`quin${++serial}`);
    const link = await create(owner, { scope: "all", expiresIn: "never" });
    // What a redemption wrote before the link was recorded: rows of one instant, the link's id in the JSON.
    const { db } = t.server.context;
    const at = t.server.context.clock.iso();
    await db
      .insertInto("contacts")
      .values([
        { user_id: owner.userId, contact_id: visitor.userId, created_at: at },
        { user_id: visitor.userId, contact_id: owner.userId, created_at: at },
      ])
      .execute();
    const permissions = { notesAccess: { scope: "all", access: "read" }, shareLink: link.id };
    await db
      .insertInto("contact_permissions")
      .values({
        grantor_id: owner.userId,
        grantee_id: visitor.userId,
        permissions: JSON.stringify(permissions),
        created_at: at,
        updated_at: at,
      })
      .execute();
    // The owner's own handshake is left alone.
    await grantAgentAccess(t, friend, owner, { notesAccess: { scope: "all", access: "read" } });
    await bindEarlierRedemptions(db as never);
    const rows = await db
      .selectFrom("contact_permissions")
      .select(["grantee_id", "share_link_id"])
      .where("grantor_id", "=", owner.userId)
      .execute();
    expect(Object.fromEntries(rows.map((r) => [r.grantee_id, r.share_link_id]))).toEqual({
      [visitor.userId]: link.id,
      [friend.userId]: null,
    });
    await ok(t, owner.apiKey, "DELETE", `/os/share/${link.id}`);
    const answer = await call<{ error: string }>(t, visitor.apiKey, "POST", "/agent/message", {
      to: `${owner.username}_coo`,
      message: "hi",
    });
    expect([answer.status, answer.body.error]).toEqual([403, "agent_permission_required"]);
    const contacts = (await ok<{ network: { contacts: { userId: string }[] } }>(t, owner.apiKey, "GET", "/network")).network.contacts;
    expect(contacts.map((c) => c.userId)).toEqual([String(friend.userId)]);
  });
});
