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
 * The owner's remote tools. A remote tool whose bare name is taken (by one of ours, or by a server
 * added earlier) is left out, so a bare name always means one tool.
 */
export async function remoteToolsFor(db: Kysely<Schema>, ownerId: number, taken: ReadonlySet<string>): Promise<AnyAgentTool[]> {
  const names = new Set(taken);
  const tools: AnyAgentTool[] = [];
  for (const server of await ownerServers(db, ownerId)) {
    if (!offersTools(server)) continue;
    for (const spec of cachedTools(server)) {
      if (names.has(spec.name)) continue;
      names.add(spec.name);
      tools.push({
        name: spec.name,
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
