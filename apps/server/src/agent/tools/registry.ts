import type { AnyAgentTool } from "./agent-tool";
import { MEMORY_TOOLS } from "./memory-tools";
import { NETWORK_TOOLS } from "./network-tools";
import { NOTES_TOOLS } from "./notes-tools";
import type { RunGrant } from "./run-grant";
import { SNAPSHOT_TOOLS } from "./snapshots-tools";
import { TODO_TOOLS } from "./todos-tools";

/** Every tool of our own: the workspace's operations, as the agent and older clients call them. */
export const NATIVE_TOOLS: readonly AnyAgentTool[] = [...NOTES_TOOLS, ...SNAPSHOT_TOOLS, ...TODO_TOOLS, ...MEMORY_TOOLS, ...NETWORK_TOOLS];

/** Callers name tools by bare name, so two tools of one name would make a call ambiguous: refuse to start. */
function assertUniqueNames(tools: readonly AnyAgentTool[]): void {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) throw new Error(`two agent tools are named ${tool.name}`);
    seen.add(tool.name);
  }
}
assertUniqueNames(NATIVE_TOOLS);

/** The personal agent as one tool, which `/mcp` lists beside the registry's (mcp-server/mcp-tools.ts). */
export const AGENT_CHAT_TOOL = "agent_chat";

/**
 * The names only our own tools have: every native tool's and `agent_chat`. A remote tool named
 * like one is renamed (see remoteToolsFor), so on no path (`/tools`, `/mcp`, the agent) can it
 * shadow a built-in or show beside it under the same name.
 */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set([...NATIVE_TOOLS.map((tool) => tool.name), AGENT_CHAT_TOOL]);

/**
 * The capability filter: the tools a run under `grant` has. A tool exists in the run only when
 * the grant holds the scope it needs and its namespace is not switched off; any other is not
 * offered to the model and cannot be called, whatever the conversation says. A grant naming its
 * `tools` narrows the set further to those.
 */
export function toolsetFor(
  grant: RunGrant,
  tools: readonly AnyAgentTool[] = NATIVE_TOOLS,
  disabledNamespaces: ReadonlySet<string> = new Set(),
): AnyAgentTool[] {
  return tools.filter(
    (tool) =>
      [tool.needs, ...(tool.alsoNeeds ?? [])].every((scope) => grant.scopes.has(scope)) &&
      !disabledNamespaces.has(tool.namespace) &&
      (grant.tools === undefined || grant.tools.has(tool.name)),
  );
}

/**
 * A tool by its bare name (`search_notes`) or qualified by its namespace (`notes.search_notes`;
 * for a renamed remote tool, also `namespace.<its name on the server>`).
 */
export function findTool(name: string, tools: readonly AnyAgentTool[] = NATIVE_TOOLS): AnyAgentTool | undefined {
  return tools.find(
    (tool) =>
      tool.name === name ||
      `${tool.namespace}.${tool.name}` === name ||
      (tool.remoteName !== undefined && `${tool.namespace}.${tool.remoteName}` === name),
  );
}
