import { existsSync } from "node:fs";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { type Browser as Chromium, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setPassword } from "../src/auth/passwords";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { authorizeUrl, loopbackCallback, pkce, registerClient, tokenRequest } from "./oauth-flow";

const CHROMIUM_PATH = "/usr/bin/chromium";
const PASSWORD = "a long enough password";

function chromiumMissing(): boolean {
  if (existsSync(CHROMIUM_PATH)) return false;
  console.warn(`Skipping the MCP OAuth test: ${CHROMIUM_PATH} is absent (install Debian's chromium package).`);
  return true;
}

/** What an MCP client such as Claude Code keeps: its registration, its tokens, the PKCE verifier; in memory here. */
class MemoryAuthProvider implements OAuthClientProvider {
  information?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  constructor(private readonly callbackUrl: string) {}
  get redirectUrl() {
    return this.callbackUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "MCP test client",
      redirect_uris: [this.callbackUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "os.notes:read os.notes:write",
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe.skipIf(chromiumMissing())("an MCP client signs in to Tandem's /mcp with OAuth, discovering everything from the 401", () => {
  let t: TestServer;
  let alice: TestUser;
  let browser: Chromium;
  let callback: Awaited<ReturnType<typeof loopbackCallback>>;

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.addUser("alice");
    await setPassword(t.server.context.db, alice.userId, PASSWORD);
    await alice.client.call("init");
    callback = await loopbackCallback();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    callback?.server.close();
    await t?.stop();
  });

  it("401 → metadata → registration → sign-in and consent in Chromium → token for /mcp → tools listed and called within the scopes", async () => {
    const provider = new MemoryAuthProvider(callback.uri);
    const url = new URL(`${t.server.url}/mcp`);
    const first = new Client({ name: "mcp-oauth-test", version: "1" });
    // No token yet: the SDK follows the challenge, registers and hands us the authorization URL.
    await expect(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))).rejects.toThrow(/nauthorized/);
    expect(provider.information?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl;
    if (!authorizationUrl) throw new Error("the SDK did not start an authorization");
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${t.server.url}/mcp`);

    // The SDK asks for every scope the metadata lists; this client wants notes only (a client's choice).
    authorizationUrl.searchParams.set("scope", "os.notes:read os.notes:write");

    // The person signs in and allows, in a real browser.
    const page = await (await browser.newContext()).newPage();
    const arrived = callback.next();
    await page.goto(authorizationUrl.href);
    await page.fill("#username", "alice");
    await page.fill("#password", PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Allow access?" }).waitFor();
    expect(await page.textContent("main")).toContain("MCP test client");
    await page.getByRole("button", { name: "Allow" }).click();
    const code = (await arrived).get("code");
    if (!code) throw new Error("no code came back");

    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(code);
    expect(provider.saved?.access_token).toMatch(/^eyJ/);
    const client = new Client({ name: "mcp-oauth-test", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["create_note", "search_notes"]));
    // Granted notes only: no todo tools, and calling one is refused.
    expect(names).not.toContain("list_todos");
    const made = await client.callTool({
      name: "create_note",
      arguments: { title: "From an MCP client", content: "Signed in with OAuth" },
    });
    expect(made.isError ?? false).toBe(false);
    const notes = await alice.client.call("listNotes", { query: {} });
    expect(JSON.stringify(notes)).toContain("From an MCP client");
    await expect(client.callTool({ name: "list_todos", arguments: {} })).rejects.toThrow();
    await client.close();
  }, 120_000);

  it("refuses at /mcp a token minted for the v1 API (another resource), with a challenge", async () => {
    // A token for the v1 base, through the same pages (scripted with fetch by the OAuth suite's helper).
    const registered = await registerClient(t, callback.uri, "v1 client");
    const { verifier, challenge } = pkce();
    const page = await (await browser.newContext()).newPage();
    const arrived = callback.next();
    await page.goto(authorizeUrl(t, registered, challenge, "os.notes:read"));
    await page.fill("#username", "alice");
    await page.fill("#password", PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Allow" }).click();
    const tokens = await tokenRequest(t, {
      grant_type: "authorization_code",
      code: (await arrived).get("code") ?? "",
      redirect_uri: registered.redirectUri,
      client_id: registered.clientId,
      code_verifier: verifier,
    });
    const token = tokens.body.access_token as string;
    const answer = await fetch(`${t.server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(answer.headers.get("www-authenticate")).toContain("/.well-known/oauth-protected-resource/mcp");
  }, 120_000);
});
