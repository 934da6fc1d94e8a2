// The tools an MCP client sees: the one tool registry, filtered for the caller exactly as
// `GET /tools` and `POST /tools` filter it, plus `agent_chat`, the personal agent as one tool.

import { zodSchema } from "@ai-sdk/provider-utils";
import { type CallToolResult, ProtocolError, ProtocolErrorCode, Server, type Tool } from "@modelcontextprotocol/server";
import { ChatRequest, MAX_CHAT_MESSAGE_CHARS } from "@tandem/core";
import { z } from "zod";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { ApiError } from "../../http/errors";
import { answerChat } from "../chat/chat-routes";
import type { AnyAgentTool } from "../tools/agent-tool";
import { callableTools, resolveCallableTool, runToolCall } from "../tools/call-tool";
import { AGENT_CHAT_TOOL } from "../tools/registry";
import { inputJsonSchema } from "../tools/to-ai-tools";

/** Who the server is, in `initialize` (2025-11-25) and, stamped by the SDK, in each 2026-07-28 result's `_meta`. */
const SERVER_INFO = { name: "tandem", title: "Tandem", version: "1" };

/** What the server tells a client about itself when it connects (or asks `server/discover`). */
const INSTRUCTIONS =
  "Tandem is the user's own workspace: notes, todos, snapshots and memory, and a personal agent. " +
  "Each tool acts as the user, within the scopes of the key or sign-in the client uses. " +
  `${AGENT_CHAT_TOOL} asks the user's personal agent, which answers with its own tools under the same limits.`;

/** The arguments of `agent_chat`: what `POST /chat` takes, less what only a stream or an attachment needs. */
const AgentChatInput = z.object({
  message: z.string().min(1).max(MAX_CHAT_MESSAGE_CHARS).describe("what to ask or tell the agent"),
  conversationId: z.number().int().positive().optional().describe("continue this conversation (from an earlier answer)"),
  model: z.string().max(200).optional().describe("a model alias: default, fast, smart or local"),
  userTimezone: z.string().max(64).optional().describe("an IANA time zone, for what 'today' means; UTC if absent"),
});

const AGENT_CHAT: Tool = {
  name: AGENT_CHAT_TOOL,
  title: "Ask the personal agent",
  description:
    "Ask the user's personal Tandem agent. It reads and works in the workspace with the tools this " +
    "connection may use, remembers the conversation (pass conversationId back to continue) and answers in text.",
  inputSchema: zodSchema(AgentChatInput).jsonSchema as Tool["inputSchema"],
  annotations: { readOnlyHint: false, openWorldHint: false },
};

function describeTool(tool: AnyAgentTool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: { properties: {}, ...inputJsonSchema(tool), type: "object" } as Tool["inputSchema"],
    annotations: { readOnlyHint: tool.readWrite === "read", openWorldHint: false },
    _meta: { "tandem/namespace": tool.namespace, "tandem/source": tool.source },
  };
}

const text = (value: string): CallToolResult["content"] => [{ type: "text", text: value }];
const toolError = (message: string): CallToolResult => ({ content: text(message), isError: true });

function toolResult(result: unknown): CallToolResult {
  const plainObject = typeof result === "object" && result !== null && !Array.isArray(result);
  return {
    content: text(JSON.stringify(result ?? null)),
    ...(plainObject ? { structuredContent: result as Record<string, unknown> } : {}),
  };
}

export interface McpCall {
  readonly app: AppContext;
  readonly principal: UserPrincipal;
  /** The caller's time zone (`X-Tandem-Timezone`), for tools that speak of "today". */
  readonly timezone: string;
  /** Aborted when the HTTP client goes away. */
  readonly signal: AbortSignal;
}

async function callAgentChat(call: McpCall, args: unknown): Promise<CallToolResult> {
  const input = AgentChatInput.safeParse(args ?? {});
  const body = input.success ? ChatRequest.safeParse({ userTimezone: call.timezone, ...input.data, stream: false }) : input;
  if (!body.success) {
    return toolError(
      `invalid arguments for ${AGENT_CHAT_TOOL}: ${body.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")}`,
    );
  }
  try {
    const answer = await answerChat(call.app, call.principal, body.data, call.signal);
    const { response, conversationId, messageId, toolsUsed } = answer;
    const incomplete = "incomplete" in answer ? { incomplete: true, reason: answer.reason } : {};
    return { content: text(response), structuredContent: { response, conversationId, messageId, toolsUsed, ...incomplete } };
  } catch (error) {
    // The caller's mistakes (an unknown model or conversation, too many runs) and a model that failed.
    if (error instanceof ApiError && (error.status < 500 || error.code === "model_failed")) return toolError(error.message);
    throw error;
  }
}

async function callRegistryTool(call: McpCall, name: string, args: unknown): Promise<CallToolResult> {
  let tool: AnyAgentTool;
  try {
    // Re-checked on every call: a namespace switched off, or a key revoked, counts at once.
    tool = await resolveCallableTool(call.app, call.principal, name);
  } catch (error) {
    // A tool the caller may not call is not a tool for it: the protocol's answer to an unknown tool.
    if (error instanceof ApiError && error.status < 500) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message);
    throw error;
  }
  try {
    const outcome = await runToolCall(call.app, call.principal, tool, args, { timezone: call.timezone, signal: call.signal });
    return outcome.ok ? toolResult(outcome.result) : toolError(outcome.failure);
  } catch (error) {
    // Arguments that fail the schema are told like a tool's failure, so a model can correct them.
    if (error instanceof ApiError && error.status < 500) return toolError(error.message);
    throw error;
  }
}

/** The longest tool name looked up: the registry's are short, and an error message repeats the name. */
const MAX_TOOL_NAME_CHARS = 200;

/** Runs a request handler; our own failure is logged and told without its details (no SQL in a client's log). */
async function guarded<T>(app: AppContext, what: string, handler: () => Promise<T>): Promise<T> {
  try {
    return await handler();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    app.logger.error({ err: error, what }, "mcp request failed");
    throw new ProtocolError(ProtocolErrorCode.InternalError, "the server failed to answer; it has been logged");
  }
}

/**
 * Cache hints for the 2026-07-28 results that may be cached (the SDK adds them; 2025 answers never
 * carry them). `server/discover` is the same for everyone and changes only with a release; the tool
 * list depends on the credential and goes stale at once (a namespace switched off leaves it).
 */
const CACHE_HINTS = {
  "server/discover": { ttlMs: 3_600_000, cacheScope: "public" },
  "tools/list": { ttlMs: 0, cacheScope: "private" },
} as const;

/**
 * An MCP server for one request of one caller, for both protocol revisions. Built per request (the
 * serving is stateless), so the list and every call are decided from the caller's scopes and
 * namespaces as they are now. The SDK's low-level `Server`: the tool list is the caller's, read
 * when asked, which `McpServer`'s tools registered up front cannot express.
 */
export function mcpServerFor(call: McpCall): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, cacheHints: CACHE_HINTS });
  server.setRequestHandler("tools/list", () =>
    guarded(call.app, "tools/list", async () => ({
      tools: [...(await callableTools(call.app, call.principal)).map(describeTool), AGENT_CHAT],
    })),
  );
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name, arguments: args } = request.params;
    if (name.length > MAX_TOOL_NAME_CHARS) throw new ProtocolError(ProtocolErrorCode.InvalidParams, "no tool has a name that long");
    const scoped = { ...call, signal: AbortSignal.any([call.signal, ctx.mcpReq.signal]) };
    const result = await guarded(call.app, `tools/call ${name}`, () =>
      name === AGENT_CHAT_TOOL ? callAgentChat(scoped, args) : callRegistryTool(scoped, name, args),
    );
    // The SDK's projection of a result onto the revision served (our tools declare no output schema).
    return server.projectCallToolResult(result, undefined);
  });
  return server;
}
