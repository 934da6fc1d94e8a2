import { z } from "zod";
import { isTimeZone } from "../dates";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** How far back `GET /tools` counts calls in `usage`. */
export const TOOL_USAGE_WINDOW_DAYS = 30;

const MAX_NAMESPACE_CHARS = 100;
const MAX_NAMESPACES_PER_CHANGE = 100;

export const ToolSourceName = z.enum(["native", "mcp", "integration"]);

export const ToolDescription = z.object({
  name: z.string().describe("the bare name, unique across the registry (search_notes)"),
  description: z.string(),
  namespace: z.string(),
  source: ToolSourceName,
  readWrite: z.enum(["read", "write"]),
  parameters: z
    .object({ type: z.string(), properties: z.record(z.string(), z.unknown()), required: z.array(z.string()) })
    .loose()
    .describe("the JSON Schema of the tool's arguments"),
});

export const ToolUsage = z.object({
  windowDays: z.number().int(),
  since: Timestamp,
  totalCalls: z.number().int(),
  byTool: z.array(
    z.object({
      tool: z.string().describe("namespace.tool"),
      calls: z.number().int(),
      failures: z.number().int().describe("calls that ended in a tool failure (422)"),
      lastCalledAt: Timestamp,
    }),
  ),
});

export const ToolNamespace = z.object({
  namespace: z.string(),
  sources: z.array(ToolSourceName),
  toolCount: z.number().int().describe("every tool of the namespace, whatever the caller's scopes"),
  enabled: z.boolean(),
});

const NamespacesAnswer = success({
  namespaces: z.array(ToolNamespace),
  summary: z.object({ total: z.number().int(), enabled: z.number().int(), disabled: z.number().int() }),
});

const NamespaceList = z.array(z.string().min(1).max(MAX_NAMESPACE_CHARS)).max(MAX_NAMESPACES_PER_CHANGE);

export const ToolIntegration = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(["oauth", "mcp"]),
  status: z.enum(["connected", "needs_reauth", "disconnected", "error"]),
  toolCount: z.number().int(),
  error: z.string().nullable().optional().describe("what went wrong last, and tools skipped (with why)"),
});

export const McpServerStatus = z.enum(["connected", "needs_reauth", "disconnected", "error"]);

const McpServerName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9][a-z0-9_-]*$/, { error: "must be lower-case letters, digits, _ or -, starting with a letter or digit" })
  .describe("the namespace its tools appear under");

const McpServerUrl = z
  .string()
  .max(2000)
  .url()
  .regex(/^https?:\/\//i, { error: "must be an http:// or https:// URL" })
  .describe("the server's MCP endpoint (Streamable HTTP; older SSE servers are tried too)");

const McpServerConfig = z
  .object({
    transport: z.enum(["auto", "streamable-http", "sse"]).default("auto").describe("auto: Streamable HTTP, then SSE for older servers"),
    scope: z.string().max(1000).optional().describe("OAuth scopes to ask for (default: what the server advertises)"),
  })
  .strict();

/** A remote tool server as the API shows it: never a token. */
export const McpServer = z.object({
  id: z.string(),
  name: z.string(),
  serverUrl: z.string(),
  config: z.object({ transport: z.string(), scope: z.string().optional() }),
  status: McpServerStatus,
  error: z.string().nullable(),
  authorized: z.boolean().describe("an authorization is stored (its tokens are never shown)"),
  toolCount: z.number().int(),
  tools: z.array(z.object({ name: z.string(), description: z.string(), readWrite: z.enum(["read", "write"]) })),
  lastCheckedAt: Timestamp.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const McpServerAnswer = success({ server: McpServer });
const McpServerId = z.object({ id: z.string().min(1).max(200) });

export const toolRoutes = {
  listTools: defineRoute({
    method: "GET",
    path: "/tools",
    category: "tools",
    summary: "The tools the caller's key may call (its scopes, enabled namespaces), their use and the v1 routes",
    auth: "user",
    response: success({
      tools: z.array(ToolDescription),
      totalTools: z.number().int(),
      usage: ToolUsage,
      osEndpoints: z.array(z.object({ method: z.string(), path: z.string() })).describe("every v1 route, path under /api/v1"),
    }),
  }),
  callTool: defineRoute({
    method: "POST",
    path: "/tools",
    category: "tools",
    summary: "Call one tool by bare name or namespace.tool, as the caller (write tools need the write scope)",
    auth: "user",
    body: z.object({
      tool: z.string({ error: "tool is required" }).min(1).max(200).describe("search_notes, or notes.search_notes"),
      params: z.record(z.string(), z.unknown()).default({}).describe("the tool's arguments (see its parameters)"),
      userTimezone: z
        .string()
        .max(64)
        .refine(isTimeZone, { error: "must be an IANA time zone such as Europe/Paris" })
        .default("UTC")
        .describe("what 'today' means to tools that ask (todos)"),
    }),
    response: success({
      tool: z.string().describe("namespace.tool of the tool that ran"),
      result: z.unknown(),
      metadata: z.object({ executionTimeMs: z.number() }),
    }),
  }),
  getToolNamespaces: defineRoute({
    method: "GET",
    path: "/tools/namespaces",
    category: "tools",
    summary: "Every tool namespace and whether it is enabled for the caller",
    auth: "user",
    response: NamespacesAnswer,
  }),
  setToolNamespaces: defineRoute({
    method: "PUT",
    path: "/tools/namespaces",
    category: "tools",
    summary: "Enable or disable tool namespaces (for POST /tools and the agent alike)",
    auth: "user",
    body: z
      .object({ enable: NamespaceList.optional(), disable: NamespaceList.optional() })
      .refine((body) => (body.enable?.length ?? 0) + (body.disable?.length ?? 0) > 0, {
        error: "give at least one namespace in enable or disable",
      })
      .refine((body) => !body.enable?.some((name) => body.disable?.includes(name)), {
        error: "a namespace cannot be both enabled and disabled",
      }),
    response: NamespacesAnswer,
  }),
  listToolIntegrations: defineRoute({
    method: "GET",
    path: "/tools/integrations",
    category: "tools",
    summary: "The caller's OAuth integrations and remote tool servers with their health (never a token)",
    auth: "user",
    response: success({ integrations: z.array(ToolIntegration) }),
  }),
  deleteToolIntegration: defineRoute({
    method: "DELETE",
    path: "/tools/integrations/:id",
    category: "tools",
    summary: "Remove an integration; its tools stop resolving at once",
    auth: "user",
    scope: "os.tools:write",
    params: z.object({ id: z.string().min(1).max(200) }),
    response: success({}),
  }),
  listMcpServers: defineRoute({
    method: "GET",
    path: "/tools/mcp",
    category: "tools",
    summary: "The caller's remote tool servers (MCP), their status and tools",
    auth: "user",
    scope: "os.tools:read",
    response: success({ servers: z.array(McpServer) }),
  }),
  addMcpServer: defineRoute({
    method: "POST",
    path: "/tools/mcp",
    category: "tools",
    summary: "Add a remote tool server; it is contacted at once (its tools are listed, or it says it needs authorization)",
    auth: "user",
    scope: "os.tools:write",
    bodyLimit: 16 * 1024,
    body: z.object({ name: McpServerName, serverUrl: McpServerUrl, config: McpServerConfig.default({ transport: "auto" }) }),
    response: McpServerAnswer,
    successStatuses: [201],
  }),
  getMcpServer: defineRoute({
    method: "GET",
    path: "/tools/mcp/:id",
    category: "tools",
    summary: "One remote tool server",
    auth: "user",
    scope: "os.tools:read",
    params: McpServerId,
    response: McpServerAnswer,
  }),
  updateMcpServer: defineRoute({
    method: "PATCH",
    path: "/tools/mcp/:id",
    category: "tools",
    summary: "Rename a remote tool server or change its URL or config (a new URL drops its authorization)",
    auth: "user",
    scope: "os.tools:write",
    bodyLimit: 16 * 1024,
    params: McpServerId,
    body: z
      .object({ name: McpServerName.optional(), serverUrl: McpServerUrl.optional(), config: McpServerConfig.optional() })
      .refine((body) => Object.values(body).some((value) => value !== undefined), { error: "give name, serverUrl or config" }),
    response: McpServerAnswer,
  }),
  deleteMcpServer: defineRoute({
    method: "DELETE",
    path: "/tools/mcp/:id",
    category: "tools",
    summary: "Remove a remote tool server and its authorization; its tools stop resolving at once",
    auth: "user",
    scope: "os.tools:write",
    params: McpServerId,
    response: success({}),
  }),
  authorizeMcpServer: defineRoute({
    method: "POST",
    path: "/tools/mcp/:id/authorize",
    category: "tools",
    summary: "Start OAuth with the server's authorization server: the URL for the user to open, and its single-use state",
    auth: "user",
    scope: "os.tools:write",
    params: McpServerId,
    response: success({
      authorizeUrl: z.string().describe("open in a browser; the authorization server sends it back to the callback"),
      state: z.string().describe("single use, expires in 10 minutes"),
      expiresAt: Timestamp,
    }),
  }),
  mcpOAuthCallback: defineRoute({
    method: "GET",
    path: "/tools/mcp/oauth/callback",
    category: "tools",
    summary:
      "Where the authorization server sends the browser back (no API key): completes for the owner's Tandem sign-in, refuses another's, else shows a page whose Connect posts to this path",
    auth: "public",
    query: z.object({
      code: z.string().max(2000).optional(),
      state: z.string().max(200).optional(),
      error: z.string().max(200).optional(),
      error_description: z.string().max(1000).optional(),
      iss: z.string().max(2000).optional(),
    }),
    response: z.string().describe("text/html"),
  }),
  refreshMcpServer: defineRoute({
    method: "POST",
    path: "/tools/mcp/:id/refresh",
    category: "tools",
    summary: "Check the server's health and read its tool list again",
    auth: "user",
    scope: "os.tools:write",
    params: McpServerId,
    response: McpServerAnswer,
  }),
  disconnectMcpServer: defineRoute({
    method: "POST",
    path: "/tools/mcp/:id/disconnect",
    category: "tools",
    summary: "Drop the stored authorization; the server stays configured, its tools leave until it connects again",
    auth: "user",
    scope: "os.tools:write",
    params: McpServerId,
    response: McpServerAnswer,
  }),
} as const;
