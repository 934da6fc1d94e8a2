// One tool call from outside the agent: `POST /tools` and the MCP server (`/mcp`) both come through
// here, so a caller is held to the same checks, runs the same code and is counted the same way
// whichever door it used.

import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { ApiError, badRequest, forbidden } from "../../http/errors";
import type { AnyAgentTool } from "./agent-tool";
import { findTool } from "./registry";
import { ownerGrant, type RunGrant } from "./run-grant";
import { executeTool, parseToolArguments, ToolFailure } from "./to-ai-tools";
import { disabledNamespaces, runToolset, userTools } from "./tool-namespaces";
import { recordToolCall } from "./tool-usage";

/** The grant of a caller acting as itself with its key: the key's scopes, the whole workspace. */
export function principalGrant(principal: UserPrincipal): RunGrant {
  return ownerGrant(principal.userId, principal.credential.scopes, principal.credential.id);
}

/** The tools the caller may call right now: its scopes' tools, less its disabled namespaces. */
export function callableTools(app: AppContext, principal: UserPrincipal): Promise<AnyAgentTool[]> {
  return runToolset(app.db, principalGrant(principal));
}

/**
 * The tool `name` names, if the caller may call it. Unknown and switched off read alike (404):
 * neither can be called, by anyone, until enabled. A tool the key's scopes do not reach is a 403
 * naming the scopes missing.
 */
export async function resolveCallableTool(app: AppContext, principal: UserPrincipal, name: string): Promise<AnyAgentTool> {
  // Ours come first in the registry, so a native name needs no look-up of the user's remote tools.
  const tool = findTool(name) ?? findTool(name, await userTools(app.db, principal.userId));
  if (!tool) throw new ApiError(404, "unknown_tool", `no tool is named "${name}"; GET /tools lists them`);
  if ((await disabledNamespaces(app.db, principal.userId)).has(tool.namespace)) {
    throw new ApiError(404, "unknown_tool", `the tool "${name}" is in the namespace ${tool.namespace}, which is disabled`);
  }
  const scopes = principal.credential.scopes;
  const missing = [tool.needs, ...(tool.alsoNeeds ?? [])].filter((scope) => !scopes.has(scope));
  if (missing.length > 0) {
    throw forbidden("insufficient_scope", `The tool ${tool.name} needs the scope${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
  }
  return tool;
}

export type ToolCallOutcome = {
  /** `namespace.tool` of the tool that ran. */
  readonly tool: string;
  readonly executionTimeMs: number;
} & ({ readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly failure: string });

/**
 * Runs an already resolved tool on raw arguments under the caller's grant and records the call.
 * Arguments that fail the tool's schema are a 400 (`invalid_params`) and run nothing; a failure
 * the tool reports (a note that does not exist, a refusal) is the outcome, `ok: false`.
 */
export async function runToolCall(
  app: AppContext,
  principal: UserPrincipal,
  tool: AnyAgentTool,
  args: unknown,
  options: { readonly timezone: string; readonly signal: AbortSignal },
): Promise<ToolCallOutcome> {
  const parsed = parseToolArguments(tool, args);
  if (!parsed.ok) throw badRequest("invalid_params", parsed.problems);
  const qualified = `${tool.namespace}.${tool.name}`;
  const started = performance.now();
  let outcome: { ok: true; result: unknown } | { ok: false; failure: string };
  try {
    const context = { app, grant: principalGrant(principal), timezone: options.timezone, signal: options.signal };
    outcome = { ok: true, result: await executeTool(tool, parsed.data, context) };
  } catch (error) {
    if (!(error instanceof ToolFailure)) throw error;
    outcome = { ok: false, failure: error.message };
  }
  const executionTimeMs = Math.round((performance.now() - started) * 1000) / 1000;
  recordToolCall(
    app.db,
    { ownerId: principal.userId, tool: qualified, ok: outcome.ok, elapsedMs: executionTimeMs, at: app.clock.now() },
    (error) => app.logger.warn({ err: error, tool: qualified }, "could not record a tool call"),
  );
  return { tool: qualified, executionTimeMs, ...outcome };
}
