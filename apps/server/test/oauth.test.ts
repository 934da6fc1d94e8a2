import { spawn } from "node:child_process";
import { request } from "node:http";
import { ALL_SCOPES, SCOPE_WORDS } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setPassword } from "../src/auth/passwords";
import { call, storages } from "./delegation-fixture";
import { BIN_PATH, startTestServer, type TestServer, type TestUser } from "./harness";
import {
  authorize,
  authorizeUrl,
  Browser,
  exchangeCode,
  formAction,
  formField,
  pkce,
  type RegisteredClient,
  registerClient,
  tokenRequest,
} from "./oauth-flow";

const PASSWORD = "correct horse battery";

/** A request with headers fetch will not send (Host). */
function rawRequest(
  t: TestServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${t.server.url}${path}`, { method, headers }, (res) => {
      let text = "";
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe.each(storages("oauth"))("the OAuth 2.1 authorization server (%s)", (storage) => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let client: RegisteredClient;

  /** A fresh browser through the whole flow; answers the token response. */
  async function connect(scope: string, user = alice, decision: "allow" | "deny" = "allow") {
    const browser = new Browser(t);
    const { verifier, challenge } = pkce();
    const callback = await authorize(t, browser, client, { scope, username: user.username, password: PASSWORD, challenge, decision });
    const code = callback.searchParams.get("code");
    if (!code) return { callback, browser, tokens: null };
    const tokens = await exchangeCode(t, client, code, verifier);
    return { callback, browser, tokens };
  }

  beforeAll(async () => {
    // Low sign-in limits, so their tests send few guesses (each is a scrypt); the defaults are 10, 50 and 20.
    t = await startTestServer({ signInFailuresPerAccountAddress: 5, signInFailuresPerAddress: 12, signInSlowdownAfter: 8 }, storage);
    alice = await t.addUser("alice");
    bob = await t.addUser("bob");
    await setPassword(t.server.context.db, alice.userId, PASSWORD);
    await setPassword(t.server.context.db, bob.userId, PASSWORD);
    await alice.client.call("init");
    client = await registerClient(t);
  });
  afterAll(() => t?.stop());

  it("publishes the authorization server and protected resource metadata", async () => {
    const as = (await (await t.fetch("/.well-known/oauth-authorization-server")).json()) as Record<string, unknown>;
    expect(as.issuer).toBe(t.server.url);
    expect(as.authorization_endpoint).toBe(`${t.server.url}/oauth/auth`);
    expect(as.token_endpoint).toBe(`${t.server.url}/oauth/token`);
    expect(as.registration_endpoint).toBe(`${t.server.url}/oauth/reg`);
    expect(as.revocation_endpoint).toBe(`${t.server.url}/oauth/token/revocation`);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.response_types_supported).toEqual(["code"]);
    expect(as.grant_types_supported).not.toContain("password");
    expect(as.grant_types_supported).not.toContain("implicit");
    expect(as.scopes_supported).toEqual(expect.arrayContaining(["openid", "offline_access", "os.notes:read", "agent.message:send"]));
    // Whatever an API key may hold an app may be given too, and the consent page says each in words.
    expect(as.scopes_supported).toEqual(expect.arrayContaining([...ALL_SCOPES]));
    for (const scope of as.scopes_supported as string[]) expect(SCOPE_WORDS[scope], scope).toBeTruthy();
    for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/v1"]) {
      const pr = (await (await t.fetch(path)).json()) as Record<string, unknown>;
      expect(pr).toMatchObject({ resource: t.server.apiUrl, authorization_servers: [t.server.url] });
    }
  });

  it("runs the code flow with PKCE: sign in, consent, token, a v1 call; scopes are enforced with insufficient_scope", async () => {
    const { callback, tokens } = await connect("openid profile offline_access os.notes:read");
    expect(`${callback.origin}${callback.pathname}`).toBe(client.redirectUri);
    expect(callback.searchParams.get("state")).toBe("st-123");
    expect(tokens?.status).toBe(200);
    const body = tokens?.body ?? {};
    expect(body.token_type).toBe("Bearer");
    expect(body.expires_in).toBe(900);
    expect(body.refresh_token).toBeTruthy();
    const notes = await call(t, body.access_token as string, "GET", "/os/notes");
    expect(notes.status).toBe(200);
    const todos = await call(t, body.access_token as string, "GET", "/os/todos");
    expect(todos.status).toBe(403);
    expect(todos.body.error).toBe("insufficient_scope");
    // userinfo
    const me = await t.fetch("/oauth/me", { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ sub: String(alice.userId), preferred_username: "alice", username: "alice" });
    // A token for one user never reaches another's data: it is alice's.
    const whoami = await call(t, body.access_token as string, "GET", "/os/notes");
    expect(whoami.status).toBe(200);
    // GET /identity describes the credential as it is: an app's token, with the scopes it carries.
    const identity = await call(t, body.access_token as string, "GET", "/identity");
    expect(identity.status).toBe(200);
    expect(identity.body).toMatchObject({ userId: alice.userId, username: "alice" });
    expect(identity.body.credential).toEqual({
      type: "oauth_token",
      id: expect.any(String),
      label: "Test CLI",
      scopes: ["openid", "os.notes:read", "profile"],
      app: { clientId: client.clientId, name: "Test CLI" },
    });
  });

  it("a wrong password is refused and the consent can be denied", async () => {
    const browser = new Browser(t);
    const { challenge } = pkce();
    const first = await browser.follow(await browser.get(authorizeUrl(t, client, challenge, "os.notes:read")));
    const wrong = await browser.post(formAction(first.html ?? ""), {
      csrf: formField(first.html ?? "", "csrf"),
      username: "alice",
      password: "nope-nope-nope",
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong username or password");
    // No CSRF token: refused.
    const forged = await browser.post(formAction(first.html ?? ""), { username: "alice", password: PASSWORD });
    expect(forged.status).toBe(403);

    const denied = await connect("os.notes:read", bob, "deny");
    expect(denied.callback.searchParams.get("error")).toBe("access_denied");
    expect(denied.tokens).toBeNull();
  });

  it("refuses a wrong redirect URI, a request without PKCE, implicit and password grants", async () => {
    const browser = new Browser(t);
    const { challenge, verifier } = pkce();
    const wrongRedirect = await browser.get(
      authorizeUrl(t, { ...client, redirectUri: "http://127.0.0.1:53682/callback/x" }, challenge, "os.notes:read"),
    );
    expect(wrongRedirect.status).toBe(400);
    expect(wrongRedirect.headers.get("location")).toBeNull();
    const noPkce = await browser.get(authorizeUrl(t, client, null, "os.notes:read"));
    expect(noPkce.status).toBe(303);
    expect(new URL(noPkce.headers.get("location") ?? "").searchParams.get("error")).toBe("invalid_request");
    const implicit = await browser.get(authorizeUrl(t, client, challenge, "os.notes:read", { response_type: "token" }));
    const implicitAnswer = implicit.headers.get("location") ?? (await implicit.text());
    expect(implicitAnswer).toContain("unsupported_response_type");
    expect(implicitAnswer).not.toContain("access_token");
    const password = await tokenRequest(t, { grant_type: "password", username: "alice", password: PASSWORD, client_id: client.clientId });
    expect(password.status).toBe(400);
    expect(password.body.error).toBe("unsupported_grant_type");
    // A code with the wrong verifier is refused.
    const callback = await authorize(t, new Browser(t), client, {
      scope: "os.notes:read",
      username: "alice",
      password: PASSWORD,
      challenge,
    });
    const bad = await tokenRequest(t, {
      grant_type: "authorization_code",
      code: callback.searchParams.get("code") ?? "",
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      code_verifier: `${verifier}x`,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_grant");
    // An unknown resource is refused.
    const otherResource = await browser.get(authorizeUrl(t, client, challenge, "os.notes:read", { resource: "https://evil.example/api" }));
    expect(new URL(otherResource.headers.get("location") ?? "").searchParams.get("error")).toBe("invalid_target");
  });

  it("rotates refresh tokens; reusing a spent one revokes the whole chain, access tokens included", async () => {
    const { tokens } = await connect("offline_access os.notes:read");
    const first = tokens?.body ?? {};
    const refreshed = await tokenRequest(t, {
      grant_type: "refresh_token",
      refresh_token: first.refresh_token as string,
      client_id: client.clientId,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect((await call(t, refreshed.body.access_token as string, "GET", "/os/notes")).status).toBe(200);
    // Reuse of the first refresh token: refused, and the grant goes.
    const reuse = await tokenRequest(t, {
      grant_type: "refresh_token",
      refresh_token: first.refresh_token as string,
      client_id: client.clientId,
    });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe("invalid_grant");
    const next = await tokenRequest(t, {
      grant_type: "refresh_token",
      refresh_token: refreshed.body.refresh_token as string,
      client_id: client.clientId,
    });
    expect(next.body.error).toBe("invalid_grant");
    expect((await call(t, refreshed.body.access_token as string, "GET", "/os/notes")).status).toBe(401);
    expect((await call(t, first.access_token as string, "GET", "/os/notes")).status).toBe(401);
  });

  it("the revocation endpoint revokes a refresh token and its grant", async () => {
    const { tokens } = await connect("offline_access os.notes:read");
    const body = tokens?.body ?? {};
    const revoked = await t.fetch("/oauth/token/revocation", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: body.refresh_token as string,
        token_type_hint: "refresh_token",
        client_id: client.clientId,
      }).toString(),
    });
    expect(revoked.status).toBe(200);
    const refresh = await tokenRequest(t, {
      grant_type: "refresh_token",
      refresh_token: body.refresh_token as string,
      client_id: client.clientId,
    });
    expect(refresh.body.error).toBe("invalid_grant");
    expect((await call(t, body.access_token as string, "GET", "/os/notes")).status).toBe(401);
  });

  it("lists connected apps and revoking one stops its access token at once", async () => {
    const other = await registerClient(t, "http://localhost:8976/cb", "Bob's <script>tool</script>");
    const browser = new Browser(t);
    const { verifier, challenge } = pkce();
    const callback = await authorize(t, browser, other, {
      scope: "offline_access os.notes:read",
      username: "bob",
      password: PASSWORD,
      challenge,
    });
    const tokens = await exchangeCode(t, other, callback.searchParams.get("code") ?? "", verifier);
    const access = tokens.body.access_token as string;
    expect((await call(t, access, "GET", "/os/notes")).status).toBe(200);
    const list = await call<{ apps: Array<Record<string, unknown>> }>(t, bob.apiKey, "GET", "/account/connected-apps");
    expect(list.status).toBe(200);
    expect(list.body.apps).toEqual([
      expect.objectContaining({ clientId: other.clientId, clientName: "Bob's <script>tool</script>", resources: [t.server.apiUrl] }),
    ]);
    expect(list.body.apps[0]?.scopes).toEqual(["os.notes:read"]);
    // An app's own token cannot manage connected apps; another user cannot revoke bob's.
    expect((await call(t, access, "GET", "/account/connected-apps")).status).toBe(403);
    expect((await call(t, alice.apiKey, "DELETE", `/account/connected-apps/${other.clientId}`)).status).toBe(404);
    const revoked = await call(t, bob.apiKey, "DELETE", `/account/connected-apps/${other.clientId}`);
    expect(revoked.status).toBe(200);
    expect((await call(t, access, "GET", "/os/notes")).status).toBe(401);
    const refresh = await tokenRequest(t, {
      grant_type: "refresh_token",
      refresh_token: tokens.body.refresh_token as string,
      client_id: other.clientId,
    });
    expect(refresh.body.error).toBe("invalid_grant");
    expect((await call<{ apps: unknown[] }>(t, bob.apiKey, "GET", "/account/connected-apps")).body.apps).toEqual([]);
  });

  it("a heartbeat schedule an app set stops, with the reason, once the app is disconnected; the app may not choose ACTIONS", async () => {
    const { tokens } = await connect("os.heartbeat:run os.heartbeat:read");
    const access = tokens?.body.access_token as string;
    const actions = await call(t, access, "POST", "/heartbeat/policy", { tier: "ACTIONS" });
    expect([actions.status, actions.body.error]).toEqual([403, "insufficient_scope"]);
    const set = await call(t, access, "POST", "/heartbeat/policy", { schedule: { enabled: true, everyMinutes: 30, quietHours: null } });
    expect(set.status).toBe(200);
    expect((await call(t, alice.apiKey, "DELETE", `/account/connected-apps/${client.clientId}`)).status).toBe(200);
    t.server.context.clock.advance(31 * 60_000);
    await t.server.context.maintenance.runAll();
    type Runs = { runs: { source: string; status: string; error: string | null }[] };
    // The server's own maintenance timer may have claimed the run first: wait for it to be recorded.
    await expect
      .poll(async () => (await call<Runs>(t, alice.apiKey, "GET", "/heartbeat/runs")).body.runs[0])
      .toMatchObject({
        source: "schedule",
        status: "failed",
        error: expect.stringContaining("the connected app that set it was disconnected"),
      });
    const policy = await call<{ policy: { schedule: { enabled: boolean } } }>(t, alice.apiKey, "GET", "/heartbeat/policy");
    expect(policy.body.policy.schedule.enabled).toBe(false);
  });

  it("the account page lists connected apps (escaped) and disconnects one", async () => {
    const other = await registerClient(t, "http://127.0.0.1:8977/cb", "<b>Page</b> app");
    const browser = new Browser(t);
    const { verifier, challenge } = pkce();
    const callback = await authorize(t, browser, other, {
      scope: "os.notes:read os.heartbeat:run",
      username: "bob",
      password: PASSWORD,
      challenge,
    });
    const tokens = await exchangeCode(t, other, callback.searchParams.get("code") ?? "", verifier);
    expect((await new Browser(t).get("/account")).headers.get("location")).toBe("/signin?next=%2Faccount");
    const page = await (await browser.get("/account")).text();
    expect(page).toContain("&lt;b&gt;Page&lt;/b&gt; app");
    expect(page).not.toContain("<b>Page</b>");
    expect(page).toContain("Read your notes");
    // The heartbeat scopes are said to be no access of their own to notes, todos or memory.
    expect(page).toContain("its runs read and write only what this app&#39;s other permissions allow");
    const forged = await browser.post("/account/apps/disconnect", { csrf: "nope", clientId: other.clientId });
    expect(forged.status).toBe(403);
    const done = await browser.post("/account/apps/disconnect", { csrf: formField(page, "csrf"), clientId: other.clientId });
    expect(await done.text()).toContain("Disconnected");
    expect((await call(t, tokens.body.access_token as string, "GET", "/os/notes")).status).toBe(401);
  });

  it("mints tokens for the MCP resource when asked, and refuses forged or foreign tokens", async () => {
    const browser = new Browser(t);
    const { verifier, challenge } = pkce();
    const callback = await authorize(t, browser, client, {
      scope: "os.notes:read",
      username: "alice",
      password: PASSWORD,
      challenge,
      extra: { resource: `${t.server.url}/mcp` },
    });
    const tokens = await exchangeCode(t, client, callback.searchParams.get("code") ?? "", verifier, { resource: `${t.server.url}/mcp` });
    expect(tokens.status).toBe(200);
    const payload = JSON.parse(Buffer.from((tokens.body.access_token as string).split(".")[1] ?? "", "base64url").toString()) as Record<
      string,
      unknown
    >;
    expect(payload.aud).toBe(`${t.server.url}/mcp`);
    expect(payload.iss).toBe(t.server.url);
    // A token whose signature was tampered with.
    const [h, p] = (tokens.body.access_token as string).split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: String(bob.userId) })).toString("base64url")}.${"A".repeat(86)}`;
    expect((await call(t, forged, "GET", "/os/notes")).status).toBe(401);
    expect((await call(t, `${h}.${p}.`, "GET", "/os/notes")).status).toBe(401);
  });

  it("the device approval form needs the session and its CSRF token", async () => {
    const started = await call<{ userCode: string; pollToken: string; approvalUrl: string }>(
      t,
      "anonymous",
      "POST",
      "/local-agent/device-code/start",
      {
        deviceId: "bob-box",
        runtime: "claude-code",
      },
    );
    const browser = new Browser(t);
    const anonymousPage = await (await browser.get(started.body.approvalUrl)).text();
    expect(anonymousPage).toContain('id="api-key"');
    const noSession = await browser.post("/device-approval", { csrf: "x", userCode: started.body.userCode, action: "approve" });
    expect(noSession.status).toBe(403);
    const signIn = await (await browser.get("/signin")).text();
    await browser.post("/signin", { csrf: formField(signIn, "csrf"), username: "bob", password: PASSWORD });
    const page = await (await browser.get(started.body.approvalUrl)).text();
    expect(page).toContain("Signed in as <strong>bob</strong>");
    const forged = await browser.post("/device-approval", { csrf: "not-the-token", userCode: started.body.userCode, action: "approve" });
    expect(forged.status).toBe(403);
    const denied = await browser.post("/device-approval", {
      csrf: formField(page, "csrf"),
      userCode: started.body.userCode,
      action: "deny",
    });
    expect(denied.status).toBe(200);
    expect((await call(t, null, "POST", "/local-agent/device-code/poll", { pollToken: started.body.pollToken })).body.status).toBe(
      "denied",
    );
  });

  it("sets a password with `users passwd` from stdin", async () => {
    const run = (password: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const storageArgs = t.databaseUrl ? ["--database-url", t.databaseUrl] : ["--data-dir", t.dataDir];
        const child = spawn(process.execPath, [BIN_PATH, "users", "passwd", "alice", ...storageArgs], { stdio: ["pipe", "pipe", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (c) => {
          stderr += c;
        });
        child.on("close", (code) => resolve({ code, stderr }));
        child.stdin.end(`${password}\n`);
      });
    expect((await run("short")).code).toBe(1);
    expect((await run("a brand new password")).code).toBe(0);
    const browser = new Browser(t);
    const page = await (await browser.get("/signin")).text();
    const old = await browser.post("/signin", { csrf: formField(page, "csrf"), username: "alice", password: PASSWORD });
    expect(old.status).toBe(401);
    const fresh = await browser.post("/signin", { csrf: formField(page, "csrf"), username: "alice", password: "a brand new password" });
    expect(fresh.status).toBe(303);
    expect(fresh.headers.getSetCookie().join()).toMatch(/tandem_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
    await setPassword(t.server.context.db, alice.userId, PASSWORD);
  });
  it("rate limits sign-in (per account and address)", async () => {
    const browser = new Browser(t);
    const page = await (await browser.get("/signin")).text();
    const csrf = formField(page, "csrf");
    const answers: Response[] = [];
    for (let i = 0; i < 7; i++)
      answers.push(await browser.post("/signin", { csrf, username: "carol-unknown", password: "wrong-password" }));
    // An unknown account is counted as a real one: five wrong guesses (this suite's limit) from this address, then it waits.
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const last = answers.at(-1);
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(60);
    expect(await last?.text()).toContain("Too many sign-in attempts");
  });

  it("counts failed sign-ins per account and address: guesses from elsewhere never lock the person out", async () => {
    const dana = await t.addUser("dana");
    await setPassword(t.server.context.db, dana.userId, PASSWORD);
    const browser = new Browser(t);
    const csrf = formField(await (await browser.get("/signin")).text(), "csrf");
    // The server counts the socket's peer (no forwarded header is trusted): each 127.0.0.x is another address.
    const signIn = (address: string, username: string, password: string) =>
      new Promise<{ status: number; retryAfter: number }>((resolve, reject) => {
        const body = new URLSearchParams({ csrf, username, password }).toString();
        const headers = { cookie: browser.jar.header(), "content-type": "application/x-www-form-urlencoded" };
        const req = request(`${t.server.url}/signin`, { method: "POST", localAddress: address, headers }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, retryAfter: Number(res.headers["retry-after"] ?? 0) }));
        });
        req.on("error", reject);
        req.end(body);
      });
    const statuses = async (n: number, attempt: (i: number) => Promise<{ status: number }>) =>
      (await Promise.all(Array.from({ length: n }, (_, i) => attempt(i)))).map((a) => a.status).sort();

    // An attacker at one address, guessing at once: exactly five guesses are checked, then that address waits.
    expect(await statuses(6, (i) => signIn("127.0.0.2", "dana", `wrong guess ${i}`))).toEqual([401, 401, 401, 401, 401, 429]);
    const waiting = await signIn("127.0.0.2", "dana", PASSWORD);
    expect(waiting.status).toBe(429);
    expect(waiting.retryAfter).toBeGreaterThan(60);
    // Eight failures from anywhere (this suite's threshold): the account is under attack…
    expect(await statuses(3, (i) => signIn("127.0.0.4", "dana", `other guess ${i}`))).toEqual([401, 401, 401]);
    // …and yet Dana, at another address, signs in: a first try is never refused for what others did.
    expect((await signIn("127.0.0.3", "dana", PASSWORD)).status).toBe(303);
    // A new address is slowed after a failure (one try a minute), not locked out.
    expect((await signIn("127.0.0.5", "dana", "a typo")).status).toBe(401);
    const slowed = await signIn("127.0.0.5", "dana", PASSWORD);
    expect(slowed.status).toBe(429);
    expect(slowed.retryAfter).toBeGreaterThan(0);
    expect(slowed.retryAfter).toBeLessThanOrEqual(60);
    // The address Dana signed in from is not slowed at all.
    expect((await signIn("127.0.0.3", "dana", "a typo")).status).toBe(401);
    expect((await signIn("127.0.0.3", "dana", PASSWORD)).status).toBe(303);
    // The slowdown is a minute.
    t.server.context.clock.advance(61_000);
    expect((await signIn("127.0.0.5", "dana", PASSWORD)).status).toBe(303);

    // Per address over all accounts (12 in this suite): the attacker's address, spraying names, is stopped for
    // every account… but one that signed in from it lately (Bob, sharing the attacker's address).
    expect((await signIn("127.0.0.2", "bob", PASSWORD)).status).toBe(303);
    expect(await statuses(7, (i) => signIn("127.0.0.2", `sprayed-${i}`, "wrong guess"))).toEqual(Array<number>(7).fill(401));
    expect((await signIn("127.0.0.2", "alice", PASSWORD)).status).toBe(429);
    expect((await signIn("127.0.0.2", "bob", PASSWORD)).status).toBe(303);
  });
});

describe.each(storages())("first run (%s)", (storage) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({}, storage);
  });
  afterAll(() => t?.stop());

  it("offers the first account only to the machine itself, and only once", async () => {
    const browser = new Browser(t);
    // Addressed by a non-loopback name (a reverse proxy, a rebinding page): no form.
    const remote = await rawRequest(t, "GET", "/", { host: "tandem.example.com" });
    expect(remote.body).not.toContain("Create account");
    const page = await (await browser.get("/")).text();
    expect(page).toContain("Create account");
    const csrf = formField(page, "csrf");
    const forgedHost = await rawRequest(
      t,
      "POST",
      "/setup",
      { host: "tandem.example.com", "content-type": "application/x-www-form-urlencoded", cookie: browser.jar.header() },
      new URLSearchParams({ csrf, username: "root", password: "first admin pass" }).toString(),
    );
    expect(forgedHost.status).toBe(403);
    const noCsrf = await browser.post("/setup", { username: "root", password: "first admin pass" });
    expect(noCsrf.status).toBe(403);
    const created = await browser.post("/setup", { csrf, username: "root", password: "first admin pass" });
    expect(created.status).toBe(201);
    expect(browser.jar.cookies.has("tandem_session")).toBe(true);
    const again = await browser.post("/setup", { csrf, username: "second", password: "first admin pass" });
    expect(again.status).toBe(409);
    expect(await (await browser.get("/")).text()).not.toContain("Create account");
    const users = await t.server.context.db.selectFrom("users").select("username").execute();
    expect(users).toEqual([{ username: "root" }]);
  });
});
