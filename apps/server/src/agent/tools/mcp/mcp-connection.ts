// One conversation with a remote tool server: connect (Streamable HTTP, or SSE for older servers),
// do one thing (list the tools, call one), close. Every call opens its own connection, so a server
// that hangs holds only the call that waits on it, and each is bounded by a deadline. Outbound
// requests go through the guarded fetch; OAuth through the SDK with our stored provider.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { z } from "zod";
import type { AppContext } from "../../../context";
import { AddressRefused } from "./address-guard";
import { type FetchLike, guardedFetch } from "./guarded-fetch";
import { type McpServerRow, type McpStatus, serverById, serverConfig, updateServer } from "./mcp-store";
import { vetToolList } from "./remote-schema";
import { singleFlightRefresh } from "./single-flight-refresh";
import { StoredOAuthProvider } from "./stored-oauth-provider";

/** The most bytes one answer of a remote server may have before it is refused (results are cut far smaller later). */
export const MAX_REMOTE_RESPONSE_BYTES = 2 * 1024 * 1024;
const MAX_LIST_PAGES = 5;
const MAX_ERROR_CHARS = 300;

/** A remote server could not be used; `status` is what its integration now says. */
export class RemoteUnavailable extends Error {
  override readonly name = "RemoteUnavailable";
  constructor(
    message: string,
    readonly status: McpStatus,
  ) {
    super(message);
  }
}

/** A remote server answered a tool call with `isError`: the tool's own failure, said to the caller. */
export class RemoteToolError extends Error {
  override readonly name = "RemoteToolError";
}

const LooseList = z.object({ tools: z.array(z.unknown()).max(1000), nextCursor: z.string().optional() }).loose();
const LooseCall = z
  .object({
    content: z.array(z.unknown()).optional(),
    structuredContent: z.record(z.string(), z.unknown()).optional(),
    isError: z.boolean().optional(),
  })
  .loose();

const short = (text: string) => (text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text);

/**
 * The fetch for everything sent to remote tool servers and their authorization servers. With a
 * `deadline`, every request it makes ends with it: for flows of several requests (OAuth discovery,
 * registration, the token exchange) that take no signal of their own.
 */
export type McpClientSdk = typeof import("./mcp-client-sdk");

let sdk: Promise<McpClientSdk> | undefined;

/** The MCP client SDK, loaded on first use. */
export function loadMcpClientSdk(): Promise<McpClientSdk> {
  sdk ??= import("./mcp-client-sdk");
  return sdk;
}

export function remoteFetch(app: AppContext, deadline?: AbortSignal): FetchLike {
  const fetch = guardedFetch({
    allowPrivate: app.config.allowPrivateToolServers,
    maxResponseBytes: MAX_REMOTE_RESPONSE_BYTES,
    headersTimeoutMs: app.config.toolServerTimeoutMs,
  });
  if (!deadline) return fetch;
  return (url, init = {}) => fetch(url, { ...init, signal: init.signal ? AbortSignal.any([init.signal, deadline]) : deadline });
}

function transportsFor(
  { StreamableHTTPClientTransport, SSEClientTransport }: McpClientSdk,
  app: AppContext,
  row: McpServerRow,
  provider: StoredOAuthProvider,
): Array<() => Transport> {
  const fetch = singleFlightRefresh(app, row.id, remoteFetch(app), provider);
  const url = new URL(row.server_url);
  const streamable = () => new StreamableHTTPClientTransport(url, { authProvider: provider, fetch });
  const sse = () => new SSEClientTransport(url, { authProvider: provider, fetch });
  const { transport } = serverConfig(row);
  if (transport === "sse") return [sse];
  if (transport === "streamable-http") return [streamable];
  return [streamable, sse];
}

/** Whether a failed Streamable HTTP connect means "an older server: try SSE" (a 4xx other than auth). */
const olderServer = (error: unknown, { StreamableHTTPError }: McpClientSdk) =>
  error instanceof StreamableHTTPError &&
  error.code !== undefined &&
  error.code >= 400 &&
  error.code < 500 &&
  error.code !== 401 &&
  error.code !== 403;

/** The integration status and message for a failure. */
function describeFailure(
  { UnauthorizedError, McpError, ErrorCode }: McpClientSdk,
  error: unknown,
  provider: StoredOAuthProvider,
  hadTokens: boolean,
  timedOut: boolean,
  timeoutMs: number,
  serverId: string,
): RemoteUnavailable {
  if (error instanceof RemoteUnavailable) return error;
  const authorization =
    provider.needsAuthorization ||
    error instanceof UnauthorizedError ||
    (error instanceof Error && /dynamic registration|authorization is required/i.test(error.message));
  if (authorization) {
    return hadTokens
      ? new RemoteUnavailable(
          `the stored authorization no longer works: authorize again (POST /tools/mcp/${serverId}/authorize)`,
          "needs_reauth",
        )
      : new RemoteUnavailable(`the server needs authorization: POST /tools/mcp/${serverId}/authorize`, "disconnected");
  }
  if (timedOut || (error instanceof McpError && error.code === ErrorCode.RequestTimeout)) {
    return new RemoteUnavailable(`the server did not answer within ${timeoutMs} ms`, "error");
  }
  if (error instanceof AddressRefused) return new RemoteUnavailable(`refused: ${error.message}`, "error");
  return new RemoteUnavailable(short(error instanceof Error ? error.message : String(error)), "error");
}

/**
 * Connects to the server in `row`, runs `work`, closes. A failure to reach or use the server is a
 * {@link RemoteUnavailable} and is recorded on the row (unless the caller cancelled); success
 * marks it connected. `work` may throw {@link RemoteToolError}, which is the tool's own failure.
 */
export async function withRemoteServer<T>(
  app: AppContext,
  row: McpServerRow,
  work: (client: Client, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
  options: { signal?: AbortSignal; onSuccess?: (result: T) => Parameters<typeof updateServer>[2] } = {},
): Promise<T> {
  const timeoutMs = app.config.toolServerTimeoutMs;
  const deadline = AbortSignal.timeout(timeoutMs);
  // An answer cut off at the size cap arrives as a transport error, not as the request's answer:
  // it ends the call at once rather than leaving it to wait for the deadline.
  const cutOff = new AbortController();
  let tooLarge: string | undefined;
  const signal = AbortSignal.any([deadline, cutOff.signal, ...(options.signal ? [options.signal] : [])]);
  const provider = new StoredOAuthProvider(app, row.id, undefined, "background", serverConfig(row).scope);
  // Once it needs reauthorization it keeps saying so (the SDK drops tokens that stopped working).
  const hadTokens = row.oauth_tokens !== null || row.status === "needs_reauth";
  const mcp = await loadMcpClientSdk();
  const candidates = transportsFor(mcp, app, row, provider);
  // A call that works clears a failure, but not the note on tools skipped at the last listing.
  const healthy = { status: "connected" as const, ...(row.status === "connected" ? {} : { error: null }) };
  let failure: unknown;
  for (const [index, makeTransport] of candidates.entries()) {
    const client = new mcp.Client({ name: "tandem", version: "1" }, { capabilities: {} });
    client.onerror = (error) => {
      const match = /larger than \d+ bytes/.exec(error instanceof Error ? error.message : String(error));
      if (!match) return;
      tooLarge = match[0];
      cutOff.abort();
    };
    try {
      await client.connect(makeTransport(), { signal, timeout: timeoutMs });
      let result: T;
      try {
        result = await work(client, { signal, timeout: timeoutMs });
      } catch (error) {
        if (error instanceof RemoteToolError) {
          await markChecked(app, row.id, healthy);
        }
        throw error;
      }
      await markChecked(app, row.id, { ...healthy, ...options.onSuccess?.(result) });
      return result;
    } catch (error) {
      if (error instanceof RemoteToolError) throw error;
      failure = error;
      if (!(index < candidates.length - 1 && olderServer(error, mcp))) break;
    } finally {
      await client.close().catch(() => {});
    }
  }
  const unavailable = tooLarge
    ? new RemoteUnavailable(`the server's answer was ${tooLarge}`, "error")
    : describeFailure(mcp, failure, provider, hadTokens, deadline.aborted, timeoutMs, row.id);
  // A caller that went away says nothing about the server's health.
  if (!options.signal?.aborted) await markChecked(app, row.id, { status: unavailable.status, error: unavailable.message });
  throw unavailable;
}

async function markChecked(app: AppContext, id: string, change: Parameters<typeof updateServer>[2]): Promise<void> {
  const now = app.clock.now();
  // The row may have been removed meanwhile; then there is nothing to mark.
  await updateServer(app.db, id, { ...change, last_checked_at: now.toISOString() }, now);
}

/** Reads the server's tool list (a few pages at most), vets it and caches it on the row. */
export async function refreshServer(app: AppContext, row: McpServerRow, signal?: AbortSignal): Promise<McpServerRow> {
  try {
    await withRemoteServer(
      app,
      row,
      async (client, options) => {
        const raw: unknown[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const listed = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, LooseList, options);
          raw.push(...listed.tools);
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        return vetToolList(raw);
      },
      { signal, onSuccess: ({ tools, skipped }) => ({ tools: JSON.stringify(tools), error: skipped }) },
    );
  } catch (error) {
    if (!(error instanceof RemoteUnavailable)) throw error;
  }
  return (await serverById(app.db, row.id)) ?? row;
}

/** What a model or client is shown of a tool's answer: its structured content, else its text. */
function resultOf(answer: z.infer<typeof LooseCall>): unknown {
  if (answer.structuredContent) return answer.structuredContent;
  const parts = (answer.content ?? []).map((part) => {
    const item = part as { type?: unknown; text?: unknown };
    if (item.type === "text" && typeof item.text === "string") return item.text;
    return `[${typeof item.type === "string" ? item.type.slice(0, 40) : "unknown"} content omitted]`;
  });
  return parts.length === 1 ? parts[0] : parts;
}

/** Calls one remote tool; the tool's own failure is a {@link RemoteToolError}. */
export async function callRemoteTool(
  app: AppContext,
  row: McpServerRow,
  tool: string,
  args: unknown,
  signal: AbortSignal,
): Promise<unknown> {
  return withRemoteServer(
    app,
    row,
    async (client, options) => {
      const answer = await client.request(
        { method: "tools/call", params: { name: tool, arguments: args as Record<string, unknown> } },
        LooseCall,
        options,
      );
      if (answer.isError) {
        const text = resultOf(answer);
        throw new RemoteToolError(short(typeof text === "string" ? text : JSON.stringify(text)) || `${tool} failed`);
      }
      return resultOf(answer);
    },
    { signal },
  );
}
