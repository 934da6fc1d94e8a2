import { existsSync } from "node:fs";
import { type Browser as Chromium, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setPassword } from "../src/auth/passwords";
import { call } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { authorizeUrl, loopbackCallback, pkce, type RegisteredClient, registerClient, tokenRequest } from "./oauth-flow";

const CHROMIUM_PATH = "/usr/bin/chromium";
const PASSWORD = "correct horse battery";

function chromiumMissing(): boolean {
  if (existsSync(CHROMIUM_PATH)) return false;
  console.warn(`Skipping the OAuth browser test: ${CHROMIUM_PATH} is absent (install Debian's chromium package).`);
  return true;
}

describe.skipIf(chromiumMissing())("OAuth sign-in and consent in a real browser", () => {
  let t: TestServer;
  let alice: TestUser;
  let browser: Chromium;
  let callback: Awaited<ReturnType<typeof loopbackCallback>>;
  let client: RegisteredClient;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    await setPassword(t.server.context.db, alice.userId, PASSWORD);
    await alice.client.call("init");
    callback = await loopbackCallback();
    client = await registerClient(t, callback.uri, "Browser test CLI");
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    callback?.server.close();
    await t?.stop();
  });

  it("DCR, authorize with PKCE, sign in, Allow, loopback redirect, token, a v1 call; then Deny", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { verifier, challenge } = pkce();
    const arrived = callback.next();
    await page.goto(authorizeUrl(t, client, challenge, "openid profile offline_access os.notes:read"));
    await expect(page.getByRole("heading", { name: "Sign in" }).isVisible()).resolves.toBe(true);
    expect(await page.content()).toContain("Browser test CLI");
    await page.fill("#username", "alice");
    await page.fill("#password", PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Allow access?" }).waitFor();
    expect(await page.textContent("main")).toContain("Read your notes");
    await page.getByRole("button", { name: "Allow" }).click();
    const query = await arrived;
    expect(query.get("state")).toBe("st-123");
    const tokens = await tokenRequest(t, {
      grant_type: "authorization_code",
      code: query.get("code") ?? "",
      redirect_uri: client.redirectUri,
      client_id: client.clientId,
      code_verifier: verifier,
    });
    expect(tokens.status).toBe(200);
    expect((await call(t, tokens.body.access_token as string, "GET", "/os/notes")).status).toBe(200);
    // The session cookie is HttpOnly and SameSite=Lax.
    const session = (await context.cookies()).find((c) => c.name === "tandem_session");
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" });

    // Signed in already: the next authorization goes straight to consent; Deny returns access_denied.
    const denied = callback.next();
    await page.goto(authorizeUrl(t, client, pkce().challenge, "os.todos:read"));
    await page.getByRole("heading", { name: "Allow access?" }).waitFor();
    await page.getByRole("button", { name: "Deny" }).click();
    expect((await denied).get("error")).toBe("access_denied");
    await context.close();
  }, 60_000);

  it("the device-code approval page takes the signed-in session instead of an API key", async () => {
    const started = await call<{ userCode: string; pollToken: string; approvalUrl: string }>(
      t,
      "anonymous",
      "POST",
      "/local-agent/device-code/start",
      {
        deviceId: "alice-laptop",
        runtime: "claude-code",
        label: "Laptop",
      },
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(started.body.approvalUrl);
    await page.getByRole("link", { name: "Sign in with your password instead" }).click();
    await page.fill("#username", "alice");
    await page.fill("#password", PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Signed in as").waitFor();
    expect(await page.textContent(".code")).toBe(started.body.userCode);
    expect(await page.locator("#api-key").count()).toBe(0);
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Approved.").waitFor();
    const polled = await call(t, null, "POST", "/local-agent/device-code/poll", { pollToken: started.body.pollToken });
    expect(polled.body.status).toBe("approved");
    await context.close();
  }, 60_000);
});
