import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGN_IN_SCOPES } from "../../server/src/delegation/runtime/pairing-service";
import { createConnectedAppMethods, readConnectedApps } from "../src/host/connections/connected-apps";
import { statusWords } from "../src/host/connections/connection-status";
import { CONNECTIONS_OFFLINE, MCP_NOT_ALLOWED, MCP_UNSUPPORTED } from "../src/host/connections/connections-call";
import { createMcpServerMethods, readAuthorization, readServer, readServerList } from "../src/host/connections/mcp-servers";
import type { SessionService } from "../src/host/host-context";
import { serverClient } from "../src/host/session/server-client";

/** A remote tool server as `GET /tools/mcp` lists it (core's `McpServer`). */
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
    // The server's reason for needs_reauth is API talk ("POST …/authorize"): the words replace it.
    expect(statusWords("needs_reauth", "authorize again (POST /tools/mcp/x/authorize)").detail).toBe(
      "Its sign-in expired or was refused. Sign in again to use its tools.",
    );
    expect(statusWords("disconnected")).toEqual({
      status: "disconnected",
      label: "Disconnected",
      detail: "Its tools are off until it is connected again (Refresh, or Sign in if it needs one).",
    });
    // Disconnected with a reason: the server asks for a sign-in it never had.
    expect(statusWords("disconnected", "the server needs authorization: POST /tools/mcp/x/authorize")).toEqual({
      status: "disconnected",
      label: "Not signed in",
      detail: "It asks you to sign in before your agent can use its tools.",
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
 * The host's calls against the real server: a full key, a key as a pairing-code sign-in gets it
 * (no `os.tools` scopes), and, for "an older server", the real server asked under a path prefix
 * where it has no such routes (its own `route_not_found`).
 */
describe("the host's calls to the real server", () => {
  let t: TestServer;
  let full: TestUser;
  let paired: TestUser;

  const session = (serverUrl: string, apiKey: string): SessionService =>
    ({
      credentials: () => ({ serverUrl, apiKey, userId: 1 }),
      client: () => serverClient(serverUrl, apiKey),
    }) as unknown as SessionService;

  beforeAll(async () => {
    t = await startTestServer();
    full = await t.addUser("ada");
    paired = await t.addUser("pat", SIGN_IN_SCOPES);
  });
  afterAll(() => t?.stop());

  it("reports a server without the routes as not supporting remote tool servers or connected apps", async () => {
    const older = session(`${t.server.url}/older`, full.apiKey);
    const mcp = createMcpServerMethods(older);
    expect(await mcp.listMcpServers()).toEqual({ supported: false, servers: [] });
    expect(await createConnectedAppMethods(older).listConnectedApps()).toEqual({ supported: false, apps: [] });
    await expect(mcp.addMcpServer({ name: "github", serverUrl: "https://mcp.example.com/mcp" })).rejects.toThrow(MCP_UNSUPPORTED);
    await expect(mcp.refreshMcpServer({ id: "mcp_1" })).rejects.toThrow(MCP_UNSUPPORTED);
  });

  it("says in plain words that a pairing-code sign-in may not manage remote tool servers", async () => {
    const mcp = createMcpServerMethods(session(t.server.url, paired.apiKey));
    expect(await mcp.listMcpServers()).toEqual({ supported: true, servers: [], notAllowed: MCP_NOT_ALLOWED });
    expect(MCP_NOT_ALLOWED).toContain("signed in with a pairing code");
    await expect(mcp.addMcpServer({ name: "github", serverUrl: "https://mcp.example.com/mcp" })).rejects.toThrow(
      "Your API key cannot do this (it lacks os.tools:write). Sign in with a key that has it.",
    );
    // Connected apps need no scope: the same key lists them.
    expect(await createConnectedAppMethods(session(t.server.url, paired.apiKey)).listConnectedApps()).toEqual({
      supported: true,
      apps: [],
    });
  });

  it("encodes an id into one path segment, and says a server removed meanwhile is gone", async () => {
    const mcp = createMcpServerMethods(session(t.server.url, full.apiKey));
    // Encoded, `a/../b` stays one id the server does not know (not a route it lacks).
    await expect(mcp.authorizeMcpServer({ id: "a/../b" })).rejects.toThrow("This remote tool server is no longer there");
    await expect(mcp.refreshMcpServer({ id: "mcp_9" })).rejects.toThrow("This remote tool server is no longer there");
    await expect(mcp.removeMcpServer({ id: "mcp_9" })).rejects.toThrow("This remote tool server is no longer there");
  });

  it("refuses bad input before asking the server, naming the field", async () => {
    const mcp = createMcpServerMethods(session(t.server.url, full.apiKey));
    await expect(mcp.addMcpServer({ name: "GitHub!", serverUrl: "https://x.example" })).rejects.toThrow("lower-case letters");
    await expect(mcp.addMcpServer({ name: "github", serverUrl: "javascript:alert(1)" })).rejects.toThrow("must start with https://");
    await expect(mcp.refreshMcpServer({ id: "" })).rejects.toThrow("refreshMcpServer: invalid input");
    expect((await full.client.call("listMcpServers")).servers).toEqual([]);
  });

  it("passes on the server's own refusal in its words", async () => {
    const mcp = createMcpServerMethods(session(t.server.url, full.apiKey));
    await expect(mcp.addMcpServer({ name: "notes", serverUrl: "https://mcp.example.com/mcp" })).rejects.toThrow(
      /^"notes" is a namespace of Tandem's own tools$/,
    );
    // Private addresses are refused unless the operator allows them.
    await expect(mcp.addMcpServer({ name: "local", serverUrl: "http://127.0.0.1:9/mcp" })).rejects.toThrow(
      "TANDEM_ALLOW_PRIVATE_TOOL_SERVERS",
    );
  });

  it("takes an app already disconnected elsewhere as done", async () => {
    const apps = createConnectedAppMethods(session(t.server.url, full.apiKey));
    await expect(apps.revokeConnectedApp({ clientId: "cli_gone" })).resolves.toBeUndefined();
  });

  it("says the server cannot be reached when nothing answers", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(createMcpServerMethods(session(deadUrl, full.apiKey)).listMcpServers()).rejects.toThrow(CONNECTIONS_OFFLINE);
    await expect(createConnectedAppMethods(session(deadUrl, full.apiKey)).listConnectedApps()).rejects.toThrow(CONNECTIONS_OFFLINE);
  });
});
