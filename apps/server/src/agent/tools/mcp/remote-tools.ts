// A user's remote tool servers' tools as registry tools: namespace = the server's name, source
// "mcp". They are built from the cached, vetted list on each lookup, so a server removed,
// disconnected or switched off stops resolving at once. A call re-reads the server's row (by
// owner) first: a tool looked up a moment before the server was removed finds nothing to call.

import type { Kysely } from "kysely";
import { z } from "zod";
import type { Schema } from "../../../db/schema";
import type { AnyAgentTool } from "../agent-tool";
import { ToolFailure } from "../to-ai-tools";
import { callRemoteTool, RemoteToolError, RemoteUnavailable } from "./mcp-connection";
import { cachedTools, offersTools, ownerServers } from "./mcp-store";

/** The most bytes of JSON arguments sent to a remote tool. */
const MAX_ARGUMENT_BYTES = 64 * 1024;

const RemoteArguments = z.record(z.string(), z.unknown()).refine((args) => Buffer.byteLength(JSON.stringify(args)) <= MAX_ARGUMENT_BYTES, {
  error: `the arguments are larger than ${MAX_ARGUMENT_BYTES} bytes`,
});

/**
 * The owner's remote tools. Bare names stay unique: a remote tool whose name is taken (`taken`:
 * ours, `agent_chat` included; or a server's added earlier) is named `<server>_<tool>` instead,
 * and is still called by `<server>.<tool>`; if even that is taken, it is left out.
 */
export async function remoteToolsFor(db: Kysely<Schema>, ownerId: number, taken: ReadonlySet<string>): Promise<AnyAgentTool[]> {
  const names = new Set(taken);
  const tools: AnyAgentTool[] = [];
  for (const server of await ownerServers(db, ownerId)) {
    if (!offersTools(server)) continue;
    for (const spec of cachedTools(server)) {
      const name = names.has(spec.name) ? `${server.name}_${spec.name}` : spec.name;
      if (names.has(name) || name.length > 64) continue;
      names.add(name);
      tools.push({
        name,
        ...(name !== spec.name ? { remoteName: spec.name } : {}),
        namespace: server.name,
        source: "mcp",
        readWrite: spec.readWrite,
        description: spec.description || `${spec.name} (remote tool of ${server.name})`,
        input: RemoteArguments,
        parameters: spec.inputSchema,
        // Remote tools reach the owner's accounts elsewhere: only keys given os.tools:* call them.
        needs: spec.readWrite === "read" ? "os.tools:read" : "os.tools:write",
        execute: async (input, context) => {
          const row = await context.app.db
            .selectFrom("mcp_servers")
            .selectAll()
            .where("id", "=", server.id)
            .where("owner_id", "=", context.grant.ownerId)
            .executeTakeFirst();
          if (!row || !offersTools(row)) throw new ToolFailure(`the tool server ${server.name} is no longer connected`);
          try {
            return await callRemoteTool(context.app, row, spec.name, input, context.signal);
          } catch (error) {
            if (error instanceof RemoteToolError) throw new ToolFailure(error.message);
            if (error instanceof RemoteUnavailable) throw new ToolFailure(`the tool server ${server.name} failed: ${error.message}`);
            throw error;
          }
        },
      });
    }
  }
  return tools;
}
