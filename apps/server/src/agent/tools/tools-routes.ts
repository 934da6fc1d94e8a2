import { type RouteDefinition, routes } from "@tandem/core";
import type { AppContext } from "../../context";
import { ApiError, badRequest, forbidden, notFound, unprocessable } from "../../http/errors";
import type { RouteHandlers } from "../../http/router";
import { revokeStoredAuthorization } from "./mcp/mcp-authorize";
import { cachedTools, offersTools, ownedServer, ownerServers } from "./mcp/mcp-store";
import { findTool } from "./registry";
import { ownerGrant } from "./run-grant";
import { executeTool, inputJsonSchema, parseToolArguments, ToolFailure } from "./to-ai-tools";
import { disabledNamespaces, namespacesView, runToolset, updateNamespaces, userTools } from "./tool-namespaces";
import { pruneToolCalls, recordToolCall, toolUsage } from "./tool-usage";

type ToolsRouteId = "listTools" | "callTool" | "getToolNamespaces" | "setToolNamespaces" | "listToolIntegrations" | "deleteToolIntegration";

/** Every v1 route, as `GET /tools` lists them beside the tools. Fixed at start. */
const OS_ENDPOINTS = (Object.values(routes) as RouteDefinition[]).map((route) => ({ method: route.method, path: route.path }));

export function toolsHandlers(app: AppContext): RouteHandlers<ToolsRouteId> {
  const { db, clock } = app;
  app.maintenance.add("tools.usage-prune", () => pruneToolCalls(db, clock.now()));
  return {
    listTools: async ({ principal }) => {
      const { credential, userId } = principal;
      const tools = await runToolset(db, ownerGrant(userId, credential.scopes, credential.id));
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
        usage: await toolUsage(db, userId, clock.now()),
        osEndpoints: OS_ENDPOINTS,
      };
    },

    callTool: async ({ input, principal, res }) => {
      const { credential, userId } = principal;
      const { tool: name, params, userTimezone } = input.body;
      // Unknown and switched off read alike: neither can be called, by anyone, until enabled.
      const tool = findTool(name, await userTools(db, userId));
      if (!tool) throw new ApiError(404, "unknown_tool", `no tool is named "${name}"; GET /tools lists them`);
      if ((await disabledNamespaces(db, userId)).has(tool.namespace)) {
        throw new ApiError(404, "unknown_tool", `the tool "${name}" is in the namespace ${tool.namespace}, which is disabled`);
      }
      const missing = [tool.needs, ...(tool.alsoNeeds ?? [])].filter((scope) => !credential.scopes.has(scope));
      if (missing.length > 0) {
        throw forbidden(
          "insufficient_scope",
          `The tool ${tool.name} needs the scope${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`,
        );
      }
      const parsed = parseToolArguments(tool, params);
      if (!parsed.ok) throw badRequest("invalid_params", parsed.problems);

      // A client that goes away cancels the call, as it would a chat run.
      const controller = new AbortController();
      res.on("close", () => controller.abort());
      const qualified = `${tool.namespace}.${tool.name}`;
      const started = performance.now();
      const context = {
        app,
        grant: ownerGrant(userId, credential.scopes, credential.id),
        timezone: userTimezone,
        signal: controller.signal,
      };
      let result: unknown;
      let failure: ToolFailure | undefined;
      try {
        result = await executeTool(tool, parsed.data, context);
      } catch (error) {
        if (!(error instanceof ToolFailure)) throw error;
        failure = error;
      }
      const executionTimeMs = Math.round((performance.now() - started) * 1000) / 1000;
      await recordToolCall(db, { ownerId: userId, tool: qualified, ok: !failure, elapsedMs: executionTimeMs, at: clock.now() });
      // A failure the tool reports (a note that does not exist, a refusal) is the call's answer, as a 422.
      if (failure) throw unprocessable("tool_failed", failure.message);
      return { success: true, tool: qualified, result, metadata: { executionTimeMs } };
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
