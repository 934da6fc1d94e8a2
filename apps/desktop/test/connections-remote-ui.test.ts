import type { TestUser } from "@tandem/server/testing";
import type { Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConnectedApps } from "../src/host/connections/connected-apps";
import { readServer } from "../src/host/connections/mcp-servers";
import { HOST_API_PATH } from "../src/shared/desktop-api-transport";
import { readDesktopVersion } from "../src/web/package-version";
import { type BrowserApp, startBrowserApp } from "./browser-app";
import { chromiumMissing, screenshot, signInOnPage } from "./browser-harness";

/**
 * The Remote tool servers and Connected apps panels, in Chromium, before the server has their
 * routes (they are being built on other branches). Everything else is real (server, host, sign-in,
 * sync); only these host methods are answered at the page's transport, by a stand-in holding
 * server answers in the spec's shapes and turning them into the page's items with the host's own
 * readers (`readServer`, `readConnectedApps`). Once the routes are merged, an end-to-end test
 * against the real server should replace this one.
 */
const PATIENCE = { timeout: 30_000, intervals: [100, 250, 500, 1000] };
const HOSTILE = `<img src=x onerror="window.__pwned = 1">`;

type SpecServer = {
  id: string;
  name: string;
  serverUrl: string;
  status: string;
  error: string | null;
  authorized: boolean;
  toolCount: number;
  tools: { name: string; description: string; readWrite: "read" | "write" }[];
  lastCheckedAt: string | null;
};

describe.skipIf(chromiumMissing("connections remote"))("remote tool servers and connected apps in the Connections section", () => {
  let app: BrowserApp;
  let user: TestUser;
  let page: Page;
  let pageErrors: string[];
  const servers: SpecServer[] = [];
  const apps = [
    {
      clientId: "client_claude",
      clientName: "Claude Desktop",
      scopes: ["openid", "os.notes:read", "os.todos:write"],
      resources: [],
      grantedAt: "2026-11-20T10:00:00.000Z",
      lastUsedAt: "2026-11-24T18:30:00.000Z",
      expiresAt: null,
    },
  ];
  const calls: { method: string; args: unknown[] }[] = [];
  /** The next answer the stand-in gives for a method, once: an error message, to see how the page says it. */
  const failNext = new Map<string, string>();
  let authorizeUrl = "";

  const remote = () => page.getByRole("region", { name: "Remote tool servers" });
  const connectedApps = () => page.getByRole("region", { name: "Connected apps" });
  const row = (name: string) => remote().getByRole("listitem", { name });
  const pwned = () => page.evaluate(() => (window as { __pwned?: unknown }).__pwned);

  /** What the host would answer for each stubbed method, from the spec-shaped state above. */
  const answer = (method: string, args: unknown[]): unknown => {
    const input = (args[0] ?? {}) as Record<string, string>;
    const server = servers.find((candidate) => candidate.id === input.id);
    const item = (value: SpecServer) => readServer({ success: true, server: value });
    switch (method) {
      case "listMcpServers":
        return { supported: true, servers: servers.map(item) };
      case "addMcpServer": {
        const added: SpecServer = {
          id: `mcp_${servers.length + 1}`,
          name: input.name ?? "",
          serverUrl: input.serverUrl ?? "",
          status: "disconnected",
          error: null,
          authorized: false,
          toolCount: 0,
          tools: [],
          lastCheckedAt: "2026-11-25T08:00:00.000Z",
        };
        servers.push(added);
        return item(added);
      }
      case "updateMcpServer":
        if (!server) throw new Error("This remote tool server is no longer there; it may have been removed elsewhere.");
        if (input.name !== undefined) server.name = input.name;
        // A new address drops the sign-in, as the server does.
        if (input.serverUrl !== undefined) Object.assign(server, { serverUrl: input.serverUrl, status: "disconnected", authorized: false });
        return item(server);
      case "authorizeMcpServer":
        return { authorizeUrl, expiresAt: null };
      case "refreshMcpServer":
        if (!server) throw new Error("This remote tool server is no longer there; it may have been removed elsewhere.");
        Object.assign(server, { status: "error", error: "connect ECONNREFUSED 203.0.113.7:443" });
        return item(server);
      case "disconnectMcpServer":
        if (!server) throw new Error("This remote tool server is no longer there; it may have been removed elsewhere.");
        Object.assign(server, { status: "disconnected", error: null, authorized: false, toolCount: 0, tools: [] });
        return item(server);
      case "removeMcpServer":
        servers.splice(servers.indexOf(server as SpecServer), 1);
        return null;
      case "listConnectedApps":
        return { supported: true, apps: readConnectedApps({ success: true, apps }) };
      case "revokeConnectedApp":
        apps.splice(
          apps.findIndex((candidate) => candidate.clientId === input.clientId),
          1,
        );
        return null;
      default:
        throw new Error(`not stubbed: ${method}`);
    }
  };

  const stub = async (route: Route) => {
    const method = new URL(route.request().url()).pathname.slice(HOST_API_PATH.length);
    const args = JSON.parse(route.request().postData() ?? "[]") as unknown[];
    calls.push({ method, args });
    const failure = failNext.get(method);
    if (failure) {
      failNext.delete(method);
      await route.fulfill({ status: 500, json: { success: false, error: "host_error", message: failure } });
      return;
    }
    try {
      await route.fulfill({ json: { success: true, result: answer(method, args) } });
    } catch (error) {
      await route.fulfill({ status: 500, json: { success: false, error: "host_error", message: (error as Error).message } });
    }
  };

  beforeAll(async () => {
    app = await startBrowserApp({ name: "connections-remote-ui", host: { version: await readDesktopVersion() } });
    user = await app.ts.addUser("ada");
    authorizeUrl = `${app.web.url}/fake-authorize?state=st_1`;
    ({ page, pageErrors } = await app.openPage({ viewport: { width: 1280, height: 1000 }, locale: "en-US" }));
    const stubbed = [
      "listMcpServers",
      "addMcpServer",
      "updateMcpServer",
      "authorizeMcpServer",
      "refreshMcpServer",
      "disconnectMcpServer",
      "removeMcpServer",
      "listConnectedApps",
      "revokeConnectedApp",
    ];
    for (const method of stubbed) await page.route(`**${HOST_API_PATH}${method}`, stub);
  });

  afterAll(async () => {
    await app?.close();
  });

  it("adds a server, keeps what was typed when adding fails, and signs in to it in the browser", async () => {
    await signInOnPage(page, user.apiKey, app.ts.server.url);
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Connections" }).click();
    await expect.poll(() => remote().textContent(), PATIENCE).toContain("No remote tool server yet.");

    const form = remote().getByRole("form", { name: "Add a remote tool server" });
    await form.getByLabel("Name").fill("github");
    await form.getByLabel("Server address").fill("https://mcp.example.com/mcp");
    failNext.set("addMcpServer", "Could not reach https://mcp.example.com/mcp: the remote server did not answer");
    await form.getByRole("button", { name: "Add server" }).click();
    await expect
      .poll(() => remote().getByRole("alert").textContent(), PATIENCE)
      .toBe("Could not reach https://mcp.example.com/mcp: the remote server did not answer");
    expect(await form.getByLabel("Name").inputValue()).toBe("github");
    expect(await form.getByLabel("Server address").inputValue()).toBe("https://mcp.example.com/mcp");

    await form.getByRole("button", { name: "Add server" }).click();
    await expect
      .poll(() => remote().getByRole("status").textContent(), PATIENCE)
      .toBe("Added “github”. Disconnected: Not signed in: its tools are off until you connect it.");
    expect(await form.getByLabel("Name").inputValue()).toBe("");
    expect(calls.filter((call) => call.method === "addMcpServer").at(-1)?.args).toEqual([
      { name: "github", serverUrl: "https://mcp.example.com/mcp" },
    ]);
    expect(await row("github").textContent()).toContain("Disconnected");
    expect(await row("github").getByRole("button", { name: "Disconnect" }).count()).toBe(0);

    // Web mode has no system browser to hand the page to: it opens a tab on the sign-in page.
    const popup = page.waitForEvent("popup");
    await row("github").getByRole("button", { name: "Sign in" }).click();
    expect((await popup).url()).toBe(authorizeUrl);
    await (await popup).close();
    await expect
      .poll(() => remote().getByRole("status").first().textContent(), PATIENCE)
      .toContain("Finish signing in to “github” in your browser. This updates by itself once you are done.");

    // The callback reached the server: the next poll sees the server connected, with its tools.
    Object.assign(servers[0] as SpecServer, {
      status: "connected",
      authorized: true,
      toolCount: 2,
      tools: [
        { name: "search_issues", description: `Search issues ${HOSTILE}`, readWrite: "read" },
        { name: "create_issue", description: "Open an issue", readWrite: "write" },
      ],
    });
    await expect.poll(() => remote().getByRole("status").textContent(), PATIENCE).toBe("Connected to “github”: 2 tools for your agent.");
    expect(await row("github").textContent()).toContain("Connected");
    expect(await row("github").getByRole("button", { name: "Sign in" }).count()).toBe(0);
    await row("github").getByText("Its tools").click();
    expect(await row("github").textContent()).toContain(`Search issues ${HOSTILE}`);
    await row("github").getByText("Its tools").click();
    await expect.poll(() => connectedApps().getByRole("listitem").count(), PATIENCE).toBe(1);
    await screenshot(page, "connections-remote");
    expect(await page.locator(".connections-view img").count()).toBe(0);
    expect(await pwned()).toBeUndefined();
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });

  it("renames a server, keeping the typed fields when the change is refused", async () => {
    await row("github").getByRole("button", { name: "Change" }).click();
    const form = row("github").getByRole("form", { name: "Change “github”" });
    expect(await form.getByRole("button", { name: "Save" }).isDisabled()).toBe(true);
    await form.getByLabel("Name").fill("gh-work");
    failNext.set("updateMcpServer", "A remote tool server is already named gh-work");
    await form.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => remote().getByRole("alert").textContent(), PATIENCE).toBe("A remote tool server is already named gh-work");
    expect(await form.getByLabel("Name").inputValue()).toBe("gh-work");

    await form.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => remote().getByRole("status").textContent(), PATIENCE).toBe("Saved “gh-work”. Connected");
    expect(calls.filter((call) => call.method === "updateMcpServer").at(-1)?.args).toEqual([{ id: "mcp_1", name: "gh-work" }]);
    await expect.poll(() => row("gh-work").count(), PATIENCE).toBe(1);
    (servers[0] as SpecServer).name = "github";
    await row("gh-work").getByRole("button", { name: "Refresh" }).click();
    await expect.poll(() => row("github").count(), PATIENCE).toBe(1);
  });

  it("refreshes, says an error with its reason, disconnects and removes, each with feedback", async () => {
    await row("github").getByRole("button", { name: "Refresh" }).click();
    await expect
      .poll(() => remote().getByRole("status").textContent(), PATIENCE)
      .toBe("Checked “github”: Error: connect ECONNREFUSED 203.0.113.7:443 (2 tools).");
    await expect.poll(() => row("github").locator(".status-pill").textContent(), PATIENCE).toBe("Error");

    await row("github").getByRole("button", { name: "Disconnect" }).click();
    await expect
      .poll(() => remote().getByRole("status").textContent(), PATIENCE)
      .toBe("Signed out of “github”: its tools are off until you sign in again.");
    await expect.poll(() => row("github").getByRole("button", { name: "Sign in" }).count(), PATIENCE).toBe(1);

    await row("github").getByRole("button", { name: "Remove" }).click();
    await row("github").getByRole("alertdialog").getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => remote().getByRole("status").textContent(), PATIENCE).toBe("Removed “github” and its tools.");
    await expect.poll(() => remote().textContent(), PATIENCE).toContain("No remote tool server yet.");
    expect(calls.filter((call) => call.method === "removeMcpServer").map((call) => call.args)).toEqual([[{ id: "mcp_1" }]]);
  });

  it("shows a connected app's name as text and disconnects it after asking", async () => {
    // The app named itself: its name is shown as text, whatever it says.
    (apps[0] as { clientName: string }).clientName = `Claude Desktop ${HOSTILE}`;
    await page.reload();
    await page.getByRole("navigation", { name: "Sections" }).getByRole("button", { name: "Connections" }).click();
    const claude = connectedApps().getByRole("listitem");
    await expect.poll(() => claude.textContent(), PATIENCE).toContain(`Claude Desktop ${HOSTILE}`);
    expect(await claude.textContent()).toContain("openid · os.notes:read · os.todos:write");
    await claude.getByRole("button", { name: "Disconnect" }).click();
    await claude.getByRole("alertdialog").getByRole("button", { name: "Cancel" }).click();
    expect(calls.some((call) => call.method === "revokeConnectedApp")).toBe(false);

    await claude.getByRole("button", { name: "Disconnect" }).click();
    await claude.getByRole("alertdialog").getByRole("button", { name: "Disconnect" }).click();
    await expect
      .poll(() => connectedApps().getByRole("status").textContent(), PATIENCE)
      .toBe(`Disconnected “Claude Desktop ${HOSTILE}”: it can no longer reach your account.`);
    await expect.poll(() => connectedApps().textContent(), PATIENCE).toContain("No app is connected to your account.");
    expect(calls.filter((call) => call.method === "revokeConnectedApp").map((call) => call.args)).toEqual([
      [{ clientId: "client_claude" }],
    ]);
    expect(await pwned()).toBeUndefined();
    expect(pageErrors.filter((error) => !error.includes("status of 500"))).toEqual([]);
  });
});
