import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { TestUser } from "@tandem/server/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The server's own fixtures: real MCP servers built with the SDK (one behind an auto-approving
// OAuth authorization server), and the OAuth flow spoken with fetch, for a real connected app.
import { setPassword } from "../../server/src/auth/passwords";
import { SIGN_IN_SCOPES } from "../../server/src/delegation/runtime/pairing-service";
import { type FakeMcpServers, startFakeMcpServers } from "../../server/test/fakes/mcp-servers";
import { authorize, Browser, pkce, registerClient, tokenRequest } from "../../server/test/oauth-flow";
import { MCP_NOT_ALLOWED } from "../src/host/connections/connections-call";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, freePort, screenshot, signInOnPage } from "./browser-harness";

/**
 * The Remote tool servers and Connected apps panels end to end, in Chromium (web mode): the real
 * server (private tool server addresses allowed, as the MCP servers here listen on 127.0.0.1), the
 * real host, real MCP servers made with the SDK, and a real OAuth grant made through the server's
 * sign-in and consent pages. Nothing of ours is stood in for.
 */
const PATIENCE = { timeout: 60_000, intervals: [100, 250, 500, 1000] };
/** A loaded machine: each step below may wait on several of the above. */
const STEP_TIMEOUT = 240_000;
const HOSTILE = `<img src=x onerror="window.__pwned = 1">`;
const PASSWORD = "correct horse battery staple";

/** A remote MCP server whose tool describes itself with markup: the panel must show it as text. */
async function startMarkupToolServer(): Promise<{ url: string; close(): Promise<void> }> {
  const http: Server = createServer(async (req, res) => {
    const server = new McpServer({ name: "markup", version: "1.0.0" });
    server.registerTool("lookup", { description: `Looks things up ${HOSTILE}`, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: "text", text: "found" }],
    }));
    // Stateless Streamable HTTP: a server and transport per request, as the SDK's examples do.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

describe.skipIf(chromiumMissing("connections remote"))("remote tool servers and connected apps, end to end", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];
  let mcp: FakeMcpServers;
  let markup: { url: string; close(): Promise<void> };

  const remote = () => page.getByRole("region", { name: "Remote tool servers" });
  const connectedApps = () => page.getByRole("region", { name: "Connected apps" });
  const row = (name: string) => remote().getByRole("listitem", { name, exact: true });
  const notice = () => remote().locator(".connections-done, [role=alert]");
  const pwned = () => page.evaluate(() => (window as { __pwned?: unknown }).__pwned);
  /** The namespaces of the tools `GET /tools` offers the user: what the agent would see. */
  const toolNamespaces = async () => new Set((await user.client.call("listTools")).tools.map((tool) => tool.namespace));
  const openConnections = () => page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Connections" }).click();

  async function addServer(name: string, serverUrl: string): Promise<void> {
    const form = remote().getByRole("form", { name: "Add a remote tool server" });
    await form.getByLabel("Name").fill(name);
    await form.getByLabel("Server address").fill(serverUrl);
    await form.getByRole("button", { name: "Add server" }).click();
  }

  async function removeServer(name: string): Promise<void> {
    await row(name).getByRole("button", { name: "Remove" }).click();
    await row(name).getByRole("alertdialog").getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => notice().textContent(), PATIENCE).toBe(`Removed “${name}” and its tools.`);
    await expect.poll(() => row(name).count(), PATIENCE).toBe(0);
  }

  beforeAll(async () => {
    [mcp, markup] = await Promise.all([startFakeMcpServers(), startMarkupToolServer()]);
    app = await startBrowserApp({
      name: "connections-remote-ui",
      server: { allowPrivateToolServers: true },
      host: { version: await readDesktopVersion() },
    });
    user = await app.ts.addUser("ada");
    await setPassword(app.ts.server.context.db, user.userId, PASSWORD);
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 960 }, locale: "en-US" }));
  }, 240_000);

  afterAll(async () => {
    await app?.close();
    await mcp?.close();
    await markup?.close();
  });

  it(
    "adds a server whose tools appear for the agent, refreshes, disconnects and removes it, each with feedback",
    async () => {
      await signInOnPage(page, user.apiKey, app.ts.server.url);
      await openConnections();
      await expect.poll(() => remote().textContent(), PATIENCE).toContain("No remote tool server yet.");

      await addServer("open", mcp.openUrl);
      await expect.poll(() => notice().textContent(), PATIENCE).toBe("Added “open”: 4 tools for your agent.");
      expect(await row("open").locator(".status-pill").textContent()).toBe("Connected");
      expect(await row("open").textContent()).toContain("4 tools");
      await row("open").getByText("Its tools").click();
      expect(await row("open").textContent()).toContain("Says the text back");
      // The server offers its tools under the name given here, as the agent sees them.
      expect(await toolNamespaces()).toContain("open");

      await row("open").getByRole("button", { name: "Refresh" }).click();
      await expect.poll(() => notice().textContent(), PATIENCE).toBe("Checked “open”: Connected (4 tools).");

      await row("open").getByRole("button", { name: "Disconnect" }).click();
      await expect.poll(() => notice().textContent(), PATIENCE).toBe("Disconnected “open”: its tools are off until it is connected again.");
      await expect.poll(() => row("open").locator(".status-pill").textContent(), PATIENCE).toBe("Disconnected");
      expect(await toolNamespaces()).not.toContain("open");

      // Refresh connects it again (it needs no sign-in), then it is removed.
      await row("open").getByRole("button", { name: "Refresh" }).click();
      await expect.poll(() => notice().textContent(), PATIENCE).toBe("Checked “open”: Connected (4 tools).");
      await removeServer("open");
      expect((await user.client.call("listMcpServers")).servers).toEqual([]);
      expect(await toolNamespaces()).not.toContain("open");
    },
    STEP_TIMEOUT,
  );

  it(
    "says in words why a server that cannot be reached is not connected",
    async () => {
      const closedPort = await freePort();
      await addServer("nowhere", `http://127.0.0.1:${closedPort}/mcp`);
      await expect.poll(() => notice().textContent(), PATIENCE).toMatch(/^Added “nowhere”\. Error: \S/);
      expect(await row("nowhere").locator(".status-pill").textContent()).toBe("Error");
      const detail = await row("nowhere").locator(".connection-detail").textContent();
      expect(detail).not.toBe("Something went wrong, and the server did not say what.");
      expect(detail?.length).toBeGreaterThan(10);
      // The server refuses a name taken already, in its words; what was typed stays.
      await addServer("nowhere", `http://127.0.0.1:${closedPort}/other`);
      await expect.poll(() => remote().getByRole("alert").textContent(), PATIENCE).toContain("already have a tool server named");
      expect(await remote().getByRole("form", { name: "Add a remote tool server" }).getByLabel("Name").inputValue()).toBe("nowhere");
      await remote().getByRole("form", { name: "Add a remote tool server" }).getByLabel("Name").fill("");
      await removeServer("nowhere");
    },
    STEP_TIMEOUT,
  );

  it(
    "shows a remote tool's description with markup as text",
    async () => {
      await addServer("markup", markup.url);
      await expect.poll(() => notice().textContent(), PATIENCE).toBe("Added “markup”: 1 tool for your agent.");
      await row("markup").getByText("Its tools").click();
      expect(await row("markup").textContent()).toContain(`Looks things up ${HOSTILE}`);
      expect(await page.locator(".connections-view img").count()).toBe(0);
      expect(await pwned()).toBeUndefined();
    },
    STEP_TIMEOUT,
  );

  it(
    "signs in to a server behind OAuth in a new tab, through Tandem's callback, until the panel says Connected",
    async () => {
      await addServer("secured", mcp.securedUrl);
      await expect
        .poll(() => notice().textContent(), PATIENCE)
        .toBe("Added “secured”. Not signed in: It asks you to sign in before your agent can use its tools.");
      expect(await row("secured").locator(".status-pill").textContent()).toBe("Not signed in");
      expect(await toolNamespaces()).not.toContain("secured");

      // Web mode has no system browser to hand the page to: the sign-in page opens in a new tab,
      // where the authorization server approves at once and sends the tab to the server's callback.
      const tab = page.context().waitForEvent("page", { timeout: PATIENCE.timeout });
      await row("secured").getByRole("button", { name: "Sign in" }).click();
      const signInTab = await tab;
      await expect.poll(() => signInTab.url(), PATIENCE).toContain(`${app.ts.server.url}/api/v1/tools/mcp/oauth/callback`);
      // The tab is not signed in to Tandem's own pages: the callback asks first, naming whose
      // Tandem account gets the approval and which server, and connects on "Connect".
      await expect.poll(() => signInTab.locator("h1").textContent(), PATIENCE).toBe("Connect a tool server?");
      const asked = (await signInTab.locator("main").textContent()) ?? "";
      expect(asked).toContain(user.username);
      expect(asked).toContain(mcp.securedUrl);
      await signInTab.getByRole("button", { name: "Connect" }).click();
      await expect.poll(() => signInTab.locator("h1").textContent(), PATIENCE).toBe("secured is connected");
      await signInTab.close();

      await expect.poll(() => notice().textContent(), PATIENCE).toBe("Connected to “secured”: 4 tools for your agent.");
      expect(await row("secured").locator(".status-pill").textContent()).toBe("Connected");
      expect(await row("secured").getByRole("button", { name: "Sign in" }).count()).toBe(0);
      expect(await toolNamespaces()).toContain("secured");
      const [secured] = (await user.client.call("listMcpServers")).servers.filter((server) => server.name === "secured");
      expect(secured).toMatchObject({ status: "connected", authorized: true });
    },
    STEP_TIMEOUT,
  );

  it(
    "lists an app the user let in through OAuth, with its name as text, and disconnects it after asking",
    async () => {
      // A real grant: the app registers, the user signs in and allows it on the server's pages.
      const client = await registerClient(app.ts, "http://127.0.0.1:53682/callback", `Notebook ${HOSTILE}`);
      const { verifier, challenge } = pkce();
      const callback = await authorize(app.ts, new Browser(app.ts), client, {
        scope: "openid os.notes:read",
        username: user.username,
        password: PASSWORD,
        challenge,
      });
      const tokens = await tokenRequest(app.ts, {
        grant_type: "authorization_code",
        code: callback.searchParams.get("code") ?? "",
        redirect_uri: client.redirectUri,
        client_id: client.clientId,
        code_verifier: verifier,
      });
      const accessToken = tokens.body.access_token ?? "";
      const notesWith = (token: string) => app.ts.fetch("/api/v1/os/notes", { headers: { authorization: `Bearer ${token}` } });
      expect((await notesWith(accessToken)).status).toBe(200);

      // The panel reads the list when the section opens.
      await page.reload();
      await openConnections();
      const notebook = connectedApps().getByRole("listitem", { name: `Notebook ${HOSTILE}` });
      await expect.poll(() => notebook.count(), PATIENCE).toBe(1);
      // Its scopes in words, as the server's account page says them, not as raw ids.
      expect(await notebook.locator(".connection-scopes").textContent()).toBe("Know who you are (your user id); Read your notes");
      await expect.poll(() => row("secured").locator(".status-pill").textContent(), PATIENCE).toBe("Connected");
      await screenshot(page, "connections-remote");

      await notebook.getByRole("button", { name: "Disconnect" }).click();
      await notebook.getByRole("alertdialog").getByRole("button", { name: "Cancel" }).click();
      expect((await user.client.call("listConnectedApps")).apps.map((listed) => listed.clientId)).toEqual([client.clientId]);

      await notebook.getByRole("button", { name: "Disconnect" }).click();
      await notebook.getByRole("alertdialog").getByRole("button", { name: "Disconnect" }).click();
      await expect
        .poll(() => connectedApps().getByRole("status").textContent(), PATIENCE)
        .toBe(`Disconnected “Notebook ${HOSTILE}”: it can no longer reach your account.`);
      await expect.poll(() => connectedApps().textContent(), PATIENCE).toContain("No app is connected to your account.");
      expect((await user.client.call("listConnectedApps")).apps).toEqual([]);
      expect((await notesWith(accessToken)).status).toBe(401);
      expect(await pwned()).toBeUndefined();
      // The one refused call (the name taken) reaches the page as the host transport's 500: nothing else.
      expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
    },
    STEP_TIMEOUT,
  );

  it(
    "tells a desktop signed in by pairing code, whose key has no os.tools scopes, that it cannot manage remote tool servers",
    async () => {
      // The key a pairing-code sign-in gets (the server's SIGN_IN_SCOPES): notes, todos, snapshots, team.
      const paired = await app.ts.addUser("pat", SIGN_IN_SCOPES);
      await page.getByRole("button", { name: "Sign out" }).click();
      await signInOnPage(page, paired.apiKey, app.ts.server.url);
      await openConnections();
      await expect.poll(() => remote().textContent(), PATIENCE).toContain(MCP_NOT_ALLOWED);
      expect(await remote().getByRole("form").count()).toBe(0);
      expect(await remote().getByRole("alert").count()).toBe(0);
      // Connected apps need no scope: that panel works with the same key.
      await expect.poll(() => connectedApps().textContent(), PATIENCE).toContain("No app is connected to your account.");
    },
    STEP_TIMEOUT,
  );
});
