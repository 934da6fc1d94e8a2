/**
 * `npm run bench -- tools`: what a tool call costs through each door, one request at a time over
 * one keep-alive connection, in one run:
 * - floors: `GET /healthz` (no auth, no SQL) and `GET /api/v1/identity` (auth and one row);
 * - the tool alone, in process (`executeTool` under the key's grant: no HTTP, no checks, no record);
 * - `POST /api/v1/tools` and `POST /mcp` `tools/call` for the same tool and arguments (both check
 *   the caller, its namespaces and scopes, run the tool and record the call), `tools/list` on
 *   `/mcp` beside `GET /api/v1/tools`, and the MCP SDK's own client calling the same tool.
 * - the same operation's REST route, `GET /api/v1/os/notes/{id}` (auth, scope, the note read and
 *   rendered): the issue's target is `POST /api/v1/tools`'s p50 at most 1 ms over it.
 * Targets are sampled interleaved, one of each per round. The overhead of a door is its p50 minus
 * the tool alone's.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ALL_SCOPES } from "@tandem/core";
import { findTool } from "../apps/server/src/agent/tools/registry";
import { ownerGrant } from "../apps/server/src/agent/tools/run-grant";
import { executeTool } from "../apps/server/src/agent/tools/to-ai-tools";
import { positiveIntFromEnv } from "./lib/env";
import { formatMs, KeepAliveClient, type LatencyStats, summarize } from "./lib/latency";
import { describeMachine, formatTable } from "./lib/report";
import { startBenchTandem } from "./lib/tandem";

const NOTES = 200;
/** A cheap read, so the figures show the door rather than the tool. */
const TOOL = "get_note_content";

export async function run(): Promise<void> {
  const samples = positiveIntFromEnv("BENCH_TOOLS_REQUESTS", 500);
  const warmup = positiveIntFromEnv("BENCH_TOOLS_WARMUP", 50);
  const tandem = await startBenchTandem();
  const client = new KeepAliveClient(tandem.server.url, tandem.authHeaders);
  const mcp = new KeepAliveClient(tandem.server.url, {
    ...tandem.authHeaders,
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
  });
  const sdkClient = new Client({ name: "bench", version: "1" });
  try {
    console.log(describeMachine());
    await client.expect(200, "POST", "/api/v1/init");
    let noteId = 0;
    for (let i = 0; i < NOTES; i++) {
      const answer = await client.expect(201, "POST", "/api/v1/os/notes", {
        title: `Note ${i}`,
        content: `# Note ${i}\n\nSome text about item ${i}, with a few words to search.`,
      });
      noteId = (JSON.parse(answer.body) as { result: { note: { id: number } } }).result.note.id;
    }
    const params = { noteId };
    const identity = JSON.parse((await client.expect(200, "GET", "/api/v1/identity")).body) as { userId: number };
    const tool = findTool(TOOL);
    if (!tool) throw new Error(`no tool ${TOOL}`);
    const context = {
      app: tandem.server.context,
      grant: ownerGrant(identity.userId, new Set(ALL_SCOPES), null),
      timezone: "UTC",
      signal: new AbortController().signal,
    };
    let rpcId = 0;
    const rpc = (method: string, rpcParams: unknown) => ({ jsonrpc: "2.0", id: ++rpcId, method, params: rpcParams });
    const mcpCall = async () => {
      const answer = await mcp.expect(200, "POST", "/mcp", rpc("tools/call", { name: TOOL, arguments: params }));
      if (answer.body.includes('"isError":true') || !answer.body.includes('"result"')) throw new Error(`tools/call failed: ${answer.body}`);
    };
    await mcpCall();
    await sdkClient.connect(
      new StreamableHTTPClientTransport(new URL(`${tandem.server.url}/mcp`), { requestInit: { headers: { ...tandem.authHeaders } } }),
    );

    const targets: [label: string, operation: () => Promise<unknown>][] = [
      ["GET /healthz (floor: no auth, no SQL)", () => client.expect(200, "GET", "/healthz")],
      ["GET /api/v1/identity (floor + auth, 1 row)", () => client.expect(200, "GET", "/api/v1/identity")],
      [`${TOOL} alone, in process (no HTTP)`, () => executeTool(tool, params, context)],
      [`GET /api/v1/os/notes/{id} (the same read over REST)`, () => client.expect(200, "GET", `/api/v1/os/notes/${noteId}`)],
      [`POST /api/v1/tools ${TOOL}`, () => client.expect(200, "POST", "/api/v1/tools", { tool: TOOL, params })],
      [`POST /mcp tools/call ${TOOL}`, mcpCall],
      [`MCP SDK Client.callTool ${TOOL} (fetch)`, () => sdkClient.callTool({ name: TOOL, arguments: params })],
      ["GET /api/v1/tools", () => client.expect(200, "GET", "/api/v1/tools")],
      ["POST /mcp tools/list", () => mcp.expect(200, "POST", "/mcp", rpc("tools/list", {}))],
    ];
    // Interleaved, one request of each target per round: a machine whose load drifts during the run
    // (other work on the same cores) slows every target alike rather than whichever came last.
    for (let round = 0; round < warmup; round++) for (const [, operation] of targets) await operation();
    const timings = targets.map((): number[] => []);
    for (let round = 0; round < samples; round++) {
      for (const [index, [, operation]] of targets.entries()) {
        const started = performance.now();
        await operation();
        timings[index]?.push(performance.now() - started);
      }
    }
    const results: [string, LatencyStats][] = targets.map(([label], index) => [label, summarize(timings[index] ?? [])]);
    const alone = results[2]?.[1].p50Ms ?? Number.NaN;
    console.log(
      `settings: ${NOTES} notes; ${warmup} warm-up + ${samples} measured requests per target, one at a time, interleaved (one of each per round)\n`,
    );
    console.log(
      formatTable(
        ["request", "p50", "p90", "p99", "mean", "p50 over the tool alone"],
        results.map(([label, stats], index) => [
          label,
          formatMs(stats.p50Ms),
          formatMs(stats.p90Ms),
          formatMs(stats.p99Ms),
          formatMs(stats.meanMs),
          index >= 4 && index <= 6 ? `+${formatMs(stats.p50Ms - alone)}` : "",
        ]),
      ),
    );
    console.log("all times in ms, client-measured (request sent → whole body read); same process as the server");
    const rest = results[3]?.[1].p50Ms ?? Number.NaN;
    const tools = results[4]?.[1].p50Ms ?? Number.NaN;
    const overRest = tools - rest;
    console.log(
      `POST /api/v1/tools p50 over the REST route's p50: ${overRest >= 0 ? "+" : ""}${formatMs(overRest)} ms (target ≤ 1 ms): ${overRest <= 1 ? "PASS" : "BELOW"}`,
    );
  } finally {
    await sdkClient.close();
    client.close();
    mcp.close();
    await tandem.close();
  }
}
