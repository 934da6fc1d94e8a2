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
});

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
    params: z.object({ id: z.string().min(1).max(200) }),
    response: success({}),
  }),
} as const;
