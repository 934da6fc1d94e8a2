import { type RouteDefinition, routes } from "@tandem/core";
import type { AppContext } from "../../context";
import { notFound, unprocessable } from "../../http/errors";
import type { RouteHandlers } from "../../http/router";
import { callableTools, resolveCallableTool, runToolCall } from "./call-tool";
import { revokeStoredAuthorization } from "./mcp/mcp-authorize";
import { cachedTools, offersTools, ownedServer, ownerServers } from "./mcp/mcp-store";
import { inputJsonSchema } from "./to-ai-tools";
import { namespacesView, updateNamespaces } from "./tool-namespaces";
import { pruneToolCalls, toolUsage } from "./tool-usage";

type ToolsRouteId = "listTools" | "callTool" | "getToolNamespaces" | "setToolNamespaces" | "listToolIntegrations" | "deleteToolIntegration";

/** Every v1 route, as `GET /tools` lists them beside the tools. Fixed at start. */
const OS_ENDPOINTS = (Object.values(routes) as RouteDefinition[]).map((route) => ({ method: route.method, path: route.path }));

export function toolsHandlers(app: AppContext): RouteHandlers<ToolsRouteId> {
  const { db, clock } = app;
  app.maintenance.add("tools.usage-prune", () => pruneToolCalls(db, clock.now()));
  return {
    listTools: async ({ principal }) => {
      const tools = await callableTools(app, principal);
      return {
        success: true,
        tools: tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          namespace: tool.namespace,
          source: tool.source,
          readWrite: tool.readWrite,
          parameters: { properties: {}, required: [], ...inputJsonSchema(tool) },
        })),
        totalTools: tools.length,
        usage: await toolUsage(db, principal.userId, clock.now()),
        osEndpoints: OS_ENDPOINTS,
      };
    },

    callTool: async ({ input, principal, res }) => {
      const { tool: name, params, userTimezone } = input.body;
      const tool = await resolveCallableTool(app, principal, name);
      // A client that goes away cancels the call, as it would a chat run.
      const controller = new AbortController();
      res.on("close", () => controller.abort());
      const outcome = await runToolCall(app, principal, tool, params, { timezone: userTimezone, signal: controller.signal });
      // A failure the tool reports (a note that does not exist, a refusal) is the call's answer, as a 422.
      if (!outcome.ok) throw unprocessable("tool_failed", outcome.failure);
      return { success: true, tool: outcome.tool, result: outcome.result, metadata: { executionTimeMs: outcome.executionTimeMs } };
    },

    getToolNamespaces: async ({ principal }) => ({ success: true, ...(await namespacesView(db, principal.userId)) }),
    setToolNamespaces: async ({ input, principal }) => ({
      success: true,
      ...(await updateNamespaces(db, principal.userId, input.body, clock.now())),
    }),

    // No OAuth integration exists yet: the list is the caller's remote tool servers.
    listToolIntegrations: async ({ principal }) => ({
      success: true,
      integrations: (await ownerServers(db, principal.userId)).map((row) => ({
        id: row.id,
        name: row.name,
        kind: "mcp" as const,
        status: row.status,
        toolCount: offersTools(row) ? cachedTools(row).length : 0,
        error: row.error,
      })),
    }),
    deleteToolIntegration: async ({ input, principal }) => {
      const row = await ownedServer(db, principal.userId, input.params.id).catch(() => {
        throw notFound(`integration ${input.params.id}`);
      });
      await db.deleteFrom("mcp_servers").where("id", "=", row.id).where("owner_id", "=", principal.userId).execute();
      await revokeStoredAuthorization(app, row);
      return { success: true };
    },
  };
}
