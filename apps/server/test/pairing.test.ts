import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, grantAgentAccess, ok, openGrant, pollEvents, registerBridge, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

interface Started {
  success: true;
  userCode: string;
  pollToken: string;
  approvalUrl: string;
  expiresAt: string;
  interval: number;
}
interface Polled {
  success: true;
  status: string;
  deviceToken?: string;
  apiKey?: string;
  username?: string;
  userId?: number;
  endpointId?: string;
  error?: string;
}

const TEN_MINUTES = 10 * 60_000;

describe.each(storages("pairing suite"))("device-code pairing on %s", (storage) => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;

  /** Bridges start pairing with `Bearer anonymous`. */
  const start = (deviceId: string, extra: Record<string, unknown> = {}) =>
    ok<Started>(ts, "anonymous", "POST", "/local-agent/device-code/start", {
      deviceId,
      runtime: "claude-code",
      bridgeVersion: "1.0.0",
      capabilities: ["text"],
      ...extra,
    });
  const poll = (pollToken: string) => call<Polled>(ts, "anonymous", "POST", "/local-agent/device-code/poll", { pollToken });
  const decide = (user: TestUser, userCode: string, action: "approve" | "deny") =>
    call(ts, user.apiKey, "POST", "/local-agent/device-code/approve", { userCode, action });

  beforeAll(async () => {
    ts = await startTestServer({}, storage);
    alice = await ts.addUser("alice");
    bob = await ts.addUser("bob");
  });
  afterAll(() => ts.stop());

  it("pairs: start → pending → approve → approved with a working token, once → consumed", async () => {
    const started = await start("alice-laptop", { label: "Laptop" });
    expect(started.userCode).toMatch(/^[B-Z]{4}-[B-Z]{4}$/);
    expect(started.pollToken.length).toBeGreaterThanOrEqual(40);
    expect(started.interval).toBe(2);
    expect(Date.parse(started.expiresAt) - ts.server.context.clock.nowMs()).toBeGreaterThan(TEN_MINUTES - 5_000);
    expect(started.approvalUrl).toBe(`${ts.server.url}/api/v1/local-agent/pair?code=${started.userCode}`);

    const stored = await ts.server.context.db
      .selectFrom("device_pairings")
      .selectAll()
      .where("device_id", "=", "alice-laptop")
      .executeTakeFirstOrThrow();
    expect(Object.values(stored).map(String)).not.toContain(started.pollToken);

    expect((await poll(started.pollToken)).body).toEqual({ success: true, status: "pending" });

    const approved = await decide(alice, started.userCode, "approve");
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({ success: true, status: "approved", deviceId: "alice-laptop", runtime: "claude-code", label: "Laptop" });

    const first = await poll(started.pollToken);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      success: true,
      status: "approved",
      userId: alice.userId,
      endpointId: expect.stringMatching(/^ep_/),
    });
    const token = first.body.deviceToken as string;
    expect(token).toMatch(/^svc_dev_/);
    expect(await ok(ts, token, "GET", "/local-agent/whoami")).toMatchObject({
      userId: alice.userId,
      deviceId: "alice-laptop",
      endpointId: first.body.endpointId,
    });
    const endpoints = await ok<{ endpoints: { endpointId: string; label: string | null; capabilities: unknown }[] }>(
      ts,
      alice.apiKey,
      "GET",
      "/local-agent/endpoints",
    );
    expect(endpoints.endpoints).toEqual([
      expect.objectContaining({ endpointId: first.body.endpointId, label: "Laptop", capabilities: ["text"] }),
    ]);

    const second = await poll(started.pollToken);
    expect(second.body).toEqual({ success: true, status: "consumed" });
    expect(JSON.stringify(second.body)).not.toContain("svc_dev_");

    const again = await decide(alice, started.userCode, "approve");
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("pairing_already_resolved");

    const audit = await ts.server.context.db
      .selectFrom("audit_log")
      .select("action")
      .where("object_type", "=", "device_pairing")
      .where("object_id", "=", String(stored.id))
      .orderBy("id")
      .execute();
    expect(audit.map((a) => a.action)).toEqual(["pairing.start", "pairing.approve", "pairing.consume"]);
  });

  it("signs an app in: a sign_in pairing answers an API key with the desktop's scopes only, once, and registers no endpoint", async () => {
    const started = await start("alice-desktop-app", { purpose: "sign_in", label: "Tandem desktop" });
    const page = await ts.fetch(new URL(started.approvalUrl).pathname + new URL(started.approvalUrl).search);
    expect(await page.text()).toContain("asks to sign in to Tandem as you");
    expect((await decide(alice, started.userCode, "approve")).status).toBe(200);

    const approved = await poll(started.pollToken);
    expect(approved.body).toMatchObject({ status: "approved", userId: alice.userId, username: "alice" });
    expect(approved.body.deviceToken).toBeUndefined();
    const identity = await ok<{ userId: number; credential: { type: string; scopes: string[] } }>(
      ts,
      approved.body.apiKey as string,
      "GET",
      "/identity",
    );
    expect(identity.userId).toBe(alice.userId);
    expect(identity.credential.type).toBe("api_key");
    // Issue #10, point 21: what the desktop uses, nothing admin-like (no os.network, memory, heartbeat);
    // raw memory's own scopes (ciphertext only; a device gets its key only from an enrolled one or the recovery code).
    expect([...identity.credential.scopes].sort()).toEqual(
      [
        "os.notes:read",
        "os.notes:write",
        "os.todos:read",
        "os.todos:write",
        "os.snapshots:read",
        "os.snapshots:write",
        "os.team:read",
        "os.team:write",
        "os.agents:read",
        "os.agents:write",
        "os.raw-memory:read",
        "os.raw-memory:write",
      ].sort(),
    );
    const key = approved.body.apiKey as string;
    const giveAway = await call(ts, key, "POST", "/network/request", { to: "bob_coo" });
    expect(giveAway.status).toBe(403);
    expect(giveAway.body.error).toBe("insufficient_scope");
    expect((await call(ts, key, "GET", "/local-agent/grants")).status).toBe(200);
    expect((await poll(started.pollToken)).body.status).toBe("consumed");
    const endpoints = await ok<{ endpoints: { deviceId: string }[] }>(ts, alice.apiKey, "GET", "/local-agent/endpoints");
    expect(endpoints.endpoints.map((e) => e.deviceId)).not.toContain("alice-desktop-app");
    expect(
      (await call(ts, "anonymous", "POST", "/local-agent/device-code/start", { deviceId: "x", runtime: "codex", purpose: "admin" })).status,
    ).toBe(400);
  });

  it("accepts the code in any case, with or without the dash", async () => {
    const started = await start("alice-case");
    const loose = started.userCode.replace("-", "").toLowerCase();
    expect((await decide(alice, loose, "approve")).status).toBe(200);
    expect((await poll(started.pollToken)).body.status).toBe("approved");
  });

  it("answers denied after the owner denies, and never gives a token", async () => {
    const started = await start("bob-phone");
    const denied = await decide(bob, started.userCode, "deny");
    expect(denied.body).toMatchObject({ success: true, status: "denied", deviceId: "bob-phone" });
    expect((await poll(started.pollToken)).body).toEqual({ success: true, status: "denied" });
    expect((await decide(bob, started.userCode, "approve")).status).toBe(409);
    expect((await poll(started.pollToken)).body).toEqual({ success: true, status: "denied" });
  });

  it("refuses unknown codes and poll tokens with 404 pairing_not_found, and bad input with 400", async () => {
    const unknownCode = await decide(alice, "BCDF-GHJK", "approve");
    expect(unknownCode.status).toBe(404);
    expect(unknownCode.body.error).toBe("pairing_not_found");
    expect((await decide(alice, "not a code at all", "approve")).status).toBe(404);
    const unknownToken = await poll("dcp_nope");
    expect(unknownToken.status).toBe(404);
    expect(unknownToken.body.error).toBe("pairing_not_found");

    const runtime = await call(ts, "anonymous", "POST", "/local-agent/device-code/start", { deviceId: "x", runtime: "gpt" });
    expect(runtime.status).toBe(400);
    expect(runtime.body.error).toBe("invalid_runtime");
    const noDevice = await call(ts, null, "POST", "/local-agent/device-code/start", { runtime: "codex" });
    expect(noDevice.status).toBe(400);
    expect(String(noDevice.body.message)).toContain("body.deviceId");
    const noToken = await call(ts, null, "POST", "/local-agent/device-code/poll", {});
    expect(noToken.status).toBe(400);
    expect(String(noToken.body.message)).toContain("body.pollToken");
    const action = await call(ts, alice.apiKey, "POST", "/local-agent/device-code/approve", { userCode: "BCDF-GHJK", action: "maybe" });
    expect(action.status).toBe(400);
    expect(String(action.body.message)).toContain("body.action");
  });

  it("needs a user key with os.team:write to approve", async () => {
    const started = await start("scope-device");
    expect(
      (await call(ts, null, "POST", "/local-agent/device-code/approve", { userCode: started.userCode, action: "approve" })).status,
    ).toBe(401);
    const reader = await ts.addUser("reader", ["os.team:read"]);
    const refused = await decide(reader, started.userCode, "approve");
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("insufficient_scope");
    expect((await poll(started.pollToken)).body.status).toBe("pending");
  });

  it("expires after 10 minutes, approved or not, unless consumed", async () => {
    const pending = await start("alice-slow");
    const approvedLate = await start("alice-late");
    expect((await decide(alice, approvedLate.userCode, "approve")).status).toBe(200);
    ts.server.context.clock.advance(TEN_MINUTES + 60_000);
    expect((await poll(pending.pollToken)).body).toEqual({ success: true, status: "expired" });
    expect((await poll(approvedLate.pollToken)).body).toEqual({ success: true, status: "expired" });
    const tooLate = await decide(alice, pending.userCode, "approve");
    expect(tooLate.status).toBe(404);
    expect(tooLate.body.error).toBe("pairing_not_found");
    const page = await ts.fetch(`/api/v1/local-agent/pair?code=${pending.userCode}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("expired");
  });

  it("gives the token to exactly one of many concurrent polls", async () => {
    const started = await start("alice-race");
    await decide(alice, started.userCode, "approve");
    const answers = await Promise.all(Array.from({ length: 8 }, () => poll(started.pollToken)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const statuses = answers.map((a) => a.body.status).sort();
    expect(statuses).toEqual(["approved", ...Array(7).fill("consumed")]);
    expect(answers.filter((a) => a.body.deviceToken !== undefined)).toHaveLength(1);
    const endpoints = await ts.server.context.db
      .selectFrom("runtime_endpoints")
      .select("id")
      .where("device_id", "=", "alice-race")
      .execute();
    expect(endpoints).toHaveLength(1);
  });

  it("never lets a pairing take over an existing device's endpoint or grants: it gets a new endpoint, the old one ends", async () => {
    const carol = await ts.addUser("carol");
    await grantAgentAccess(ts, carol, bob);
    const desktop = await registerBridge(ts, bob, "bob-desktop", "codex");
    const grant = await openGrant(ts, carol.apiKey, bob);
    expect(grant.frozenEndpointId).toBe(desktop.endpointId);
    const sent = await ok<{ messageId: string }>(ts, carol.apiKey, "POST", "/local-agent/messages", {
      communicationSessionId: grant.commSessionId,
      clientMessageId: "before-takeover",
      kind: "text",
      payload: { text: "private work for bob's desktop" },
    });
    const oldEvents = await pollEvents(ts, desktop);
    const lastOldCursor = Number(oldEvents.at(-1)?.cursor);

    // Someone else's device claims the same device id, and bob is talked into approving it.
    const started = await start("bob-desktop", { runtime: "codex" });
    await decide(bob, started.userCode, "approve");
    const polled = await poll(started.pollToken);
    expect(polled.body.status).toBe("approved");
    const newcomer = { deviceToken: polled.body.deviceToken as string, endpointId: polled.body.endpointId as string };
    expect(newcomer.endpointId).not.toBe(desktop.endpointId);

    // The old endpoint is gone with its token; the grant frozen to it ended, and both sides hear it.
    expect((await call(ts, desktop.deviceToken, "GET", "/local-agent/whoami")).status).toBe(401);
    expect((await ok<{ status: string }>(ts, bob.apiKey, "GET", `/local-agent/grants/${grant.commSessionId}`)).status).toBe("revoked");
    // Nothing of the old endpoint reaches the newcomer: no replay of its log, no injection of its messages.
    const replay = await pollEvents(ts, newcomer);
    expect(JSON.stringify(replay)).not.toContain("private work");
    expect(replay.every((e) => Number(e.cursor) > lastOldCursor)).toBe(true);
    const verdict = await ok<{ valid: boolean }>(ts, newcomer.deviceToken, "POST", "/local-agent/injections/validate", {
      messageId: sent.messageId,
      communicationSessionId: grant.commSessionId,
      endpointId: newcomer.endpointId,
    });
    expect(verdict.valid).toBe(false);
    const endpoints = await ok<{ endpoints: { endpointId: string; deviceId: string }[] }>(ts, bob.apiKey, "GET", "/local-agent/endpoints");
    expect(endpoints.endpoints.filter((e) => e.deviceId === "bob-desktop").map((e) => e.endpointId)).toEqual([newcomer.endpointId]);
    // The default route pointed at the old endpoint; it is cleared, not moved to the newcomer.
    expect((await call(ts, newcomer.deviceToken, "GET", "/local-agent/default-route")).status).toBe(404);
  });

  it("shows the owner where a request came from and what approving gives, in plain words", async () => {
    const response = await ts.fetch("/api/v1/local-agent/device-code/start", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer anonymous", "user-agent": "EvilBridge/6.6 <b>" },
      body: JSON.stringify({ deviceId: "who-is-this", runtime: "claude-code", purpose: "sign_in" }),
    });
    const started = (await response.json()) as Started;
    const page = await (await fetch(started.approvalUrl)).text();
    expect(page).toMatch(/Requested from<\/dt><dd>(::ffff:)?127\.0\.0\.1</);
    expect(page).toContain("EvilBridge/6.6 &lt;b&gt;");
    expect(page).toContain("Sign an app in to your account");
    expect(page).toContain("If someone sent you this link or code, deny it.");
    expect(page).toContain("It will not be able to change your contacts or who may reach your agent");
    const bridge = await (await fetch((await start("my-laptop")).approvalUrl)).text();
    expect(bridge).toContain("Connect a local agent bridge (claude-code)");
    expect(bridge).toContain("It gets no access to your notes or todos");
  });

  it("serves an approval page that escapes what the device sent and locks itself down", async () => {
    const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    const started = await start(`dev"><script>alert(2)</script>`, { label: hostile, bridgeVersion: "</title><script>bad()</script>" });
    const response = await fetch(started.approvalUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();

    const page = await response.text();
    expect(page).toContain(started.userCode);
    expect(page).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(page).toContain("dev&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;");
    expect(page).not.toContain("<script>alert");
    expect(page).not.toContain("<img");
    expect(page).not.toContain("<script>bad()");
    // The only script is ours, under the response's nonce.
    const scripts = page.match(/<script[^>]*>/g) ?? [];
    expect(scripts).toEqual([`<script nonce="${nonce}">`]);
    expect(page).toContain('data-action="approve"');
    expect(page).toContain('data-action="deny"');
    expect(page).toContain('type="password"');

    const second = await fetch(started.approvalUrl);
    expect(second.headers.get("content-security-policy")).not.toContain(nonce as string);
  });

  it("approves through the same route the page's script calls, relative to the page", async () => {
    const started = await start("alice-page");
    const approveUrl = new URL("device-code/approve", started.approvalUrl);
    expect(approveUrl.pathname).toBe("/api/v1/local-agent/device-code/approve");
    const response = await fetch(approveUrl, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${alice.apiKey}` },
      body: JSON.stringify({ userCode: new URL(started.approvalUrl).searchParams.get("code"), action: "approve" }),
    });
    expect(response.status).toBe(200);
    const page = await (await fetch(started.approvalUrl)).text();
    expect(page).toContain("approved");
    expect(page).not.toContain('data-action="approve"');
  });

  it("answers unknown or missing codes on the page with a 404 page", async () => {
    for (const path of [
      "/api/v1/local-agent/pair?code=BCDF-GHJK",
      "/api/v1/local-agent/pair",
      "/api/v1/local-agent/pair?code=%3Cscript%3E",
    ]) {
      const response = await ts.fetch(path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type")).toContain("text/html");
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(await response.text()).not.toContain("<script>");
    }
  });

  it("deletes pairings a day past expiry in maintenance", async () => {
    const started = await start("alice-old");
    ts.server.context.clock.advance(TEN_MINUTES + 24 * 60 * 60_000 + 1_000);
    await ts.server.context.maintenance.runAll();
    expect((await poll(started.pollToken)).status).toBe(404);
    const left = await ts.server.context.db.selectFrom("device_pairings").select("id").where("device_id", "=", "alice-old").execute();
    expect(left).toHaveLength(0);
  });
});

describe("pairing behind a configured public URL", () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer({ publicUrl: "https://tandem.example.com/" });
  });
  afterAll(() => ts.stop());

  it("builds approvalUrl from publicUrl", async () => {
    const started = await ok<Started>(ts, null, "POST", "/local-agent/device-code/start", { deviceId: "d", runtime: "codex" });
    expect(started.approvalUrl).toBe(`https://tandem.example.com/api/v1/local-agent/pair?code=${started.userCode}`);
  });

  it("limits pairing starts per client address (no credential to limit them by)", async () => {
    // The burst (60, one already used above) passes; then a 429 comes, however slow this machine is.
    let accepted = 0;
    let limited: Awaited<ReturnType<typeof call<{ error?: string }>>> | undefined;
    for (let i = 0; i < 200 && !limited; i++) {
      const response = await call<{ error?: string }>(ts, null, "POST", "/local-agent/device-code/start", {
        deviceId: `d${i}`,
        runtime: "codex",
      });
      if (response.status === 200) accepted++;
      else limited = response;
    }
    expect(accepted).toBeGreaterThanOrEqual(59);
    expect(limited?.status).toBe(429);
    expect(limited?.body.error).toBe("rate_limited");
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });
});
