import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnectedAppMethods, readConnectedApps } from "../src/host/connections/connected-apps";
import { statusWords } from "../src/host/connections/connection-status";
import { CONNECTIONS_OFFLINE, MCP_UNSUPPORTED } from "../src/host/connections/connections-call";
import { createMcpServerMethods, readAuthorization, readServer, readServerList } from "../src/host/connections/mcp-servers";
import type { SessionService } from "../src/host/host-context";
import { serverClient } from "../src/host/session/server-client";

/** A remote tool server as the spec's `GET /tools/mcp` lists it (the shape the server branch declares). */
const SPEC_SERVER = {
  id: "mcp_1",
  name: "github",
  serverUrl: "https://mcp.example.com/mcp",
  config: { transport: "auto" },
  status: "needs_reauth",
  error: "invalid_grant: refresh token expired",
  authorized: true,
  toolCount: 2,
  tools: [
    { name: "search_issues", description: "Search issues", readWrite: "read" },
    { name: "create_issue", description: "x".repeat(900), readWrite: "write" },
  ],
  lastCheckedAt: "2026-11-25T07:00:00.000Z",
  createdAt: "2026-11-24T07:00:00.000Z",
  updatedAt: "2026-11-25T07:00:00.000Z",
};

describe("connection status in words", () => {
  it("says connected, needs sign-in, disconnected and error with its reason", () => {
    expect(statusWords("connected")).toEqual({ status: "connected", label: "Connected", detail: null });
    expect(statusWords("needs_reauth")).toEqual({
      status: "needs_reauth",
      label: "Needs sign-in",
      detail: "Its sign-in expired or was refused. Sign in again to use its tools.",
    });
    expect(statusWords("needs_reauth", "invalid_grant").detail).toBe(
      "Its sign-in expired or was refused (invalid_grant). Sign in again to use its tools.",
    );
    expect(statusWords("disconnected", "ignored")).toEqual({
      status: "disconnected",
      label: "Disconnected",
      detail: "Not signed in: its tools are off until you connect it.",
    });
    expect(statusWords("error", "  connect ECONNREFUSED\n  10.0.0.1:443 ")).toEqual({
      status: "error",
      label: "Error",
      detail: "connect ECONNREFUSED 10.0.0.1:443",
    });
    expect(statusWords("error", null).detail).toBe("Something went wrong, and the server did not say what.");
    expect(statusWords("error", "   ").detail).toBe("Something went wrong, and the server did not say what.");
  });

  it("never reads a status it does not know as connected, and cuts a long reason", () => {
    expect(statusWords("paused")).toEqual({
      status: "error",
      label: "Unknown state",
      detail: "The server reports “paused”, which this app does not know.",
    });
    const long = statusWords("error", "<html>".repeat(200)).detail ?? "";
    expect(long.length).toBeLessThanOrEqual(301);
    expect(long.endsWith("…")).toBe(true);
  });
});

describe("remote tool server answers", () => {
  it("reads the spec's list: status in words, tools, descriptions cut", () => {
    const [server] = readServerList({ success: true, servers: [SPEC_SERVER] });
    expect(server).toMatchObject({
      id: "mcp_1",
      name: "github",
      serverUrl: "https://mcp.example.com/mcp",
      authorized: true,
      toolCount: 2,
      lastCheckedAt: "2026-11-25T07:00:00.000Z",
      state: { status: "needs_reauth", label: "Needs sign-in" },
    });
    expect(server?.state.detail).toContain("invalid_grant: refresh token expired");
    expect(server?.tools.map((tool) => [tool.name, tool.readWrite])).toEqual([
      ["search_issues", "read"],
      ["create_issue", "write"],
    ]);
    expect(server?.tools[1]?.description.length).toBe(501);
  });

  it("takes what is missing or looser calmly: a numeric id, no tools, no error, an unknown readWrite", () => {
    const server = readServer({
      success: true,
      server: {
        id: 7,
        name: "linear",
        serverUrl: "https://l.example/mcp",
        status: "connected",
        tools: [{ name: "t", readWrite: "admin" }],
      },
    });
    expect(server).toMatchObject({ id: "7", authorized: true, toolCount: 1, lastCheckedAt: null, state: { label: "Connected" } });
    expect(server.tools[0]).toEqual({ name: "t", description: "", readWrite: "write" });
  });

  it("says in words when an answer cannot be read", () => {
    expect(() => readServerList({ success: true, items: [] })).toThrow(
      "The server's answer about remote tool servers was not understood; this app may need an update.",
    );
  });

  it("opens only web addresses for sign-in", () => {
    expect(
      readAuthorization({ authorizeUrl: "https://auth.example.com/authorize?state=s", state: "s", expiresAt: "2026-11-25T08:00:00Z" }),
    ).toEqual({
      authorizeUrl: "https://auth.example.com/authorize?state=s",
      expiresAt: "2026-11-25T08:00:00Z",
    });
    expect(readAuthorization({ authorizeUrl: "http://127.0.0.1:9/authorize" }).expiresAt).toBeNull();
    for (const hostile of ["javascript:alert(1)", "file:///etc/passwd", "smb://evil/share", "not a url"]) {
      expect(() => readAuthorization({ authorizeUrl: hostile, state: "s" })).toThrow("not a web page");
    }
  });
});

describe("connected app answers", () => {
  it("names an app by its client id when it gave no name", () => {
    const apps = readConnectedApps({
      success: true,
      apps: [
        {
          clientId: "cli_1",
          clientName: "Claude Desktop",
          scopes: ["openid", "os.notes:read"],
          resources: ["http://x/api/v1"],
          grantedAt: "2026-11-20T10:00:00.000Z",
          lastUsedAt: null,
          expiresAt: "2026-12-20T10:00:00.000Z",
        },
        {
          clientId: "cli_2",
          clientName: "  ",
          scopes: [],
          resources: [],
          grantedAt: "2026-11-21T10:00:00.000Z",
          lastUsedAt: null,
          expiresAt: null,
        },
      ],
    });
    expect(apps).toEqual([
      {
        clientId: "cli_1",
        name: "Claude Desktop",
        scopes: ["openid", "os.notes:read"],
        grantedAt: "2026-11-20T10:00:00.000Z",
        lastUsedAt: null,
        expiresAt: "2026-12-20T10:00:00.000Z",
      },
      { clientId: "cli_2", name: "cli_2", scopes: [], grantedAt: "2026-11-21T10:00:00.000Z", lastUsedAt: null, expiresAt: null },
    ]);
  });
});

/**
 * The host's calls against a stand-in for routes this branch's server does not have yet, speaking
 * the spec's wire format (status codes and error bodies as the server's error handler writes them).
 */
describe("the host's calls for routes the server may not have", () => {
  type Reply = { status: number; body: unknown };
  const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
  let reply: (req: IncomingMessage) => Reply = () => ({ status: 500, body: {} });
  let fake: Server;
  let serverUrl: string;

  const session = (url: () => string): SessionService =>
    ({
      credentials: () => ({ serverUrl: url(), apiKey: "tdm_test_key", userId: 1 }),
      client: () => serverClient(url(), "tdm_test_key"),
    }) as unknown as SessionService;

  beforeAll(async () => {
    fake = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", auth: req.headers.authorization, body });
        const answer = reply(req);
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    serverUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => fake.close(() => resolve())));

  const routeMissing = (req: IncomingMessage): Reply => ({
    status: 404,
    body: { success: false, error: "route_not_found", message: `No route ${req.method} ${req.url}` },
  });

  it("reports an older server as not supporting remote tool servers or connected apps", async () => {
    reply = routeMissing;
    const mcp = createMcpServerMethods(session(() => serverUrl));
    const apps = createConnectedAppMethods(session(() => serverUrl));
    expect(await mcp.listMcpServers()).toEqual({ supported: false, servers: [] });
    expect(await apps.listConnectedApps()).toEqual({ supported: false, apps: [] });
    await expect(mcp.addMcpServer({ name: "github", serverUrl: "https://mcp.example.com/mcp" })).rejects.toThrow(MCP_UNSUPPORTED);
    await expect(mcp.refreshMcpServer({ id: "mcp_1" })).rejects.toThrow(MCP_UNSUPPORTED);
    expect(seen.at(0)).toMatchObject({ method: "GET", url: "/api/v1/tools/mcp", auth: "Bearer tdm_test_key" });
    expect(seen.at(1)).toMatchObject({ method: "GET", url: "/api/v1/account/connected-apps" });
  });

  it("sends the spec's requests, with ids encoded into one path segment", async () => {
    seen.length = 0;
    reply = (req) =>
      req.url?.endsWith("/authorize")
        ? {
            status: 200,
            body: { success: true, authorizeUrl: "https://auth.example.com/a", state: "st", expiresAt: "2026-11-25T08:00:00Z" },
          }
        : req.method === "DELETE"
          ? { status: 200, body: { success: true } }
          : { status: req.method === "POST" && req.url === "/api/v1/tools/mcp" ? 201 : 200, body: { success: true, server: SPEC_SERVER } };
    const mcp = createMcpServerMethods(session(() => serverUrl));
    const added = await mcp.addMcpServer({ name: "github", serverUrl: " https://mcp.example.com/mcp " });
    expect(added.name).toBe("github");
    expect(JSON.parse(seen[0]?.body ?? "{}")).toEqual({ name: "github", serverUrl: "https://mcp.example.com/mcp", config: {} });
    await mcp.authorizeMcpServer({ id: "a/../b" });
    await mcp.refreshMcpServer({ id: "mcp_1" });
    await mcp.disconnectMcpServer({ id: "mcp_1" });
    await mcp.updateMcpServer({ id: "mcp_1", name: "gh" });
    await mcp.removeMcpServer({ id: "mcp_1" });
    expect(seen.map((request) => `${request.method} ${request.url}`)).toEqual([
      "POST /api/v1/tools/mcp",
      "POST /api/v1/tools/mcp/a%2F..%2Fb/authorize",
      "POST /api/v1/tools/mcp/mcp_1/refresh",
      "POST /api/v1/tools/mcp/mcp_1/disconnect",
      "PATCH /api/v1/tools/mcp/mcp_1",
      "DELETE /api/v1/tools/mcp/mcp_1",
    ]);
    expect(JSON.parse(seen[4]?.body ?? "{}")).toEqual({ name: "gh" });
  });

  it("refuses bad input before asking the server, naming the field", async () => {
    seen.length = 0;
    const mcp = createMcpServerMethods(session(() => serverUrl));
    await expect(mcp.addMcpServer({ name: "GitHub!", serverUrl: "https://x.example" })).rejects.toThrow("lower-case letters");
    await expect(mcp.addMcpServer({ name: "github", serverUrl: "javascript:alert(1)" })).rejects.toThrow("must start with https://");
    await expect(mcp.refreshMcpServer({ id: "" })).rejects.toThrow("refreshMcpServer: invalid input");
    expect(seen).toEqual([]);
  });

  it("says in words what went wrong: a missing scope, a server removed meanwhile, the server's own refusal", async () => {
    const mcp = createMcpServerMethods(session(() => serverUrl));
    reply = () => ({ status: 403, body: { success: false, error: "insufficient_scope", message: "This needs the scope os.tools:write" } });
    await expect(mcp.addMcpServer({ name: "github", serverUrl: "https://x.example/mcp" })).rejects.toThrow(
      "Your API key cannot do this (it lacks os.tools:write). Sign in with a key that has it.",
    );
    reply = () => ({ status: 404, body: { success: false, error: "not_found", message: "mcp server mcp_9 not found" } });
    await expect(mcp.refreshMcpServer({ id: "mcp_9" })).rejects.toThrow("This remote tool server is no longer there");
    reply = () => ({
      status: 400,
      body: { success: false, error: "invalid_body", message: "serverUrl: must be an http:// or https:// URL" },
    });
    await expect(mcp.addMcpServer({ name: "github", serverUrl: "https://x.example/mcp" })).rejects.toThrow(
      /^serverUrl: must be an http:\/\/ or https:\/\/ URL$/,
    );
    reply = () => ({ status: 200, body: { success: true, authorizeUrl: "javascript:alert(1)", state: "s" } });
    await expect(mcp.authorizeMcpServer({ id: "mcp_1" })).rejects.toThrow("it was not opened");
  });

  it("takes an app already disconnected elsewhere as done, but not a missing route", async () => {
    const apps = createConnectedAppMethods(session(() => serverUrl));
    reply = () => ({ status: 404, body: { success: false, error: "not_found", message: "connected app cli_1 not found" } });
    await expect(apps.revokeConnectedApp({ clientId: "cli_1" })).resolves.toBeUndefined();
    reply = routeMissing;
    await expect(apps.revokeConnectedApp({ clientId: "cli_1" })).rejects.toThrow("No route DELETE");
  });

  it("says the server cannot be reached when nothing answers", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const mcp = createMcpServerMethods(session(() => deadUrl));
    const apps = createConnectedAppMethods(session(() => deadUrl));
    await expect(mcp.listMcpServers()).rejects.toThrow(CONNECTIONS_OFFLINE);
    await expect(apps.listConnectedApps()).rejects.toThrow(CONNECTIONS_OFFLINE);
  });
});
