// MCP revision 2026-07-28 ("modern"), served from `/mcp` beside the handshake revisions.
//
// 2026-07-28 has no `initialize` and no session: each request names its protocol version and the
// client's capabilities in `params._meta`, mirrored in the `MCP-Protocol-Version`, `Mcp-Method`
// and `Mcp-Name` headers, and `server/discover` tells what the server speaks. The SDK this server
// uses (`@modelcontextprotocol/sdk` 1.x, the last of its line) knows only the handshake revisions,
// so this module is the small adapter the difference needs: it tells a modern request from a
// legacy one as the spec and SDK v2's `classifyInboundRequest` do (by the `_meta` claim, never
// by guessing), checks its envelope and headers, answers `server/discover`, and hands `tools/list`
// and `tools/call` to the very SDK `Server` that answers legacy clients (over the SDK's in-memory
// transport), adding the result fields the revision requires. Nothing is kept between requests.

import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  ImplementationSchema,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { MCP_INSTRUCTIONS, MCP_SERVER_CAPABILITIES, MCP_SERVER_INFO } from "./mcp-tools";

export const MODERN_PROTOCOL_VERSION = "2026-07-28";
/** The modern revisions served; `supported` in a version error and `server/discover` list these only (legacy ones are negotiated by `initialize`). */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION];

const PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo";
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";

/** The codes 2026-07-28 reserves for its own errors (basic/index, "Error Codes"). */
export const HEADER_MISMATCH = -32020;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** Revision identifiers are ISO dates: anything from 2026-07-28 on is of the modern, handshake-less era. */
const isModernVersion = (version: string) => version >= MODERN_PROTOCOL_VERSION;

/** The per-request envelope: the version and capabilities are required, the client's name optional. */
const Envelope = z.looseObject({
  [PROTOCOL_VERSION_KEY]: z.string().min(1).max(64),
  [CLIENT_CAPABILITIES_KEY]: z.record(z.string(), z.unknown()),
  [CLIENT_INFO_KEY]: ImplementationSchema.optional(),
});

/** A JSON-RPC error to answer with, before or instead of any method. */
export interface RpcRejection {
  readonly kind: "reject";
  readonly status: number;
  readonly id: RequestId | null;
  readonly error: { code: number; message: string; data?: unknown };
}

export type McpRoute =
  | { readonly kind: "legacy" }
  | { readonly kind: "modern"; readonly message: JSONRPCMessage & { method: string }; readonly version: string }
  | RpcRejection;

/** The headers 2026-07-28 mirrors from the body, as Express gives them (lower-case names). */
export interface McpHeaders {
  readonly "mcp-protocol-version"?: string;
  readonly "mcp-method"?: string;
  readonly "mcp-name"?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function metaOf(message: unknown): Record<string, unknown> | undefined {
  const params = isObject(message) ? message.params : undefined;
  const meta = isObject(params) ? params._meta : undefined;
  return isObject(meta) ? meta : undefined;
}

/** Whether a message claims the modern era: its `_meta` names a protocol version (valid or not). */
const claimsModern = (message: unknown) => PROTOCOL_VERSION_KEY in (metaOf(message) ?? {});

/** One header's value, trimmed of the optional whitespace HTTP allows (Node joins a repeated one with commas). */
function header(headers: McpHeaders, name: keyof McpHeaders): string | undefined {
  const value = headers[name];
  return typeof value === "string" ? value.trim() : undefined;
}

function idOf(message: unknown): RequestId | null {
  const id = isObject(message) ? message.id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

const reject = (status: number, id: RequestId | null, code: number, message: string, data?: unknown): RpcRejection => ({
  kind: "reject",
  status,
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

const mismatch = (id: RequestId | null, what: string) => reject(400, id, HEADER_MISMATCH, `Header mismatch: ${what}`);

/**
 * Which era a parsed POST body belongs to. Legacy unless it carries the `_meta` claim (or a header
 * names a modern revision): the legacy path, the SDK's transport, then answers exactly as before.
 */
export function routeMcpRequest(body: unknown, headers: McpHeaders): McpRoute {
  if (Array.isArray(body)) {
    // Batches are a 2025-03-26 feature; 2026-07-28 has none.
    return body.some(claimsModern)
      ? reject(400, null, ErrorCode.InvalidRequest, `A JSON-RPC batch may not hold ${MODERN_PROTOCOL_VERSION} requests`)
      : { kind: "legacy" };
  }
  const id = idOf(body);
  const versionHeader = header(headers, "mcp-protocol-version");
  const headerIsModern = versionHeader !== undefined && isModernVersion(versionHeader);
  if (!claimsModern(body)) {
    if (!headerIsModern) return { kind: "legacy" };
    if (isObject(body) && body.method === "initialize") {
      return mismatch(id, `initialize is the legacy handshake, but MCP-Protocol-Version names ${versionHeader}`);
    }
    return reject(
      400,
      id,
      ErrorCode.InvalidParams,
      `MCP-Protocol-Version names ${versionHeader}, but params._meta lacks "${PROTOCOL_VERSION_KEY}" and "${CLIENT_CAPABILITIES_KEY}"`,
    );
  }
  if (!isJSONRPCRequest(body) && !isJSONRPCNotification(body)) {
    return reject(400, id, ErrorCode.InvalidRequest, "The body is not a JSON-RPC request or notification");
  }
  const envelope = Envelope.safeParse(metaOf(body));
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    const key = issue?.path.join(".") || "_meta";
    return reject(400, id, ErrorCode.InvalidParams, `Invalid params._meta: ${key}: ${issue?.message ?? "invalid"}`, { key });
  }
  const version = envelope.data[PROTOCOL_VERSION_KEY];
  if (versionHeader !== undefined && versionHeader !== version) {
    return mismatch(id, `MCP-Protocol-Version is ${versionHeader}, params._meta names ${version}`);
  }
  const methodHeader = header(headers, "mcp-method");
  if (methodHeader !== undefined && methodHeader !== body.method) {
    return mismatch(id, `Mcp-Method is ${methodHeader}, the body calls ${body.method}`);
  }
  return { kind: "modern", message: body, version };
}

/** `Mcp-Name` as the client meant it: plain ASCII, or `=?base64?…?=` for anything else; undefined if malformed. */
function decodeName(value: string): string | undefined {
  const encoded = /^=\?base64\?(.*)\?=$/.exec(value)?.[1];
  if (encoded === undefined) return value;
  if (encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return undefined;
  return Buffer.from(encoded, "base64").toString("utf8");
}

/** The checks of the standard headers a modern request must carry (streamable-http, "Server Validation"). */
function checkStandardHeaders(request: JSONRPCRequest, version: string, headers: McpHeaders): RpcRejection | undefined {
  const { id, method } = request;
  if (header(headers, "mcp-protocol-version") === undefined) {
    return mismatch(id, `params._meta names ${version}, but the MCP-Protocol-Version header is missing`);
  }
  if (header(headers, "mcp-method") === undefined) return mismatch(id, "the Mcp-Method header is missing");
  const name = method === "tools/call" ? request.params?.name : undefined;
  if (typeof name !== "string") return undefined;
  const nameHeader = header(headers, "mcp-name");
  if (nameHeader === undefined) return mismatch(id, `the body calls ${name}, but the Mcp-Name header is missing`);
  const decoded = decodeName(nameHeader);
  if (decoded === undefined) return mismatch(id, "Mcp-Name holds a malformed base64 value");
  if (decoded !== name) return mismatch(id, `Mcp-Name is ${decoded}, the body calls ${name}`);
  return undefined;
}

/** Fields 2026-07-28 adds to results that may be cached: how long, and for whom. */
const CACHE_HINTS: Readonly<Record<string, { ttlMs: number; cacheScope: "public" | "private" }>> = {
  // The same for every caller, and changes only with a new release.
  "server/discover": { ttlMs: 3_600_000, cacheScope: "public" },
  // Per credential, and stale at once: a namespace switched off leaves the list immediately.
  "tools/list": { ttlMs: 0, cacheScope: "private" },
};

/** A result as 2026-07-28 words it: `resultType`, the server's identity in `_meta`, cache hints where due. */
function completeResult(method: string, result: Record<string, unknown>): Record<string, unknown> {
  const meta = isObject(result._meta) ? result._meta : {};
  return { ...result, ...CACHE_HINTS[method], resultType: "complete", _meta: { ...meta, [SERVER_INFO_KEY]: MCP_SERVER_INFO } };
}

function discoverResult(): Record<string, unknown> {
  return {
    supportedVersions: [...MODERN_PROTOCOL_VERSIONS],
    capabilities: MCP_SERVER_CAPABILITIES,
    instructions: MCP_INSTRUCTIONS,
  };
}

/** The methods 2026-07-28 defines that this server implements; the SDK's `Server` answers the last two. */
const SDK_METHODS = new Set(["tools/list", "tools/call"]);

/** Runs one request through an SDK `Server` over a linked in-memory pair, and resolves with its response. */
async function exchange(server: Server, request: JSONRPCRequest, signal: AbortSignal): Promise<JSONRPCMessage> {
  signal.throwIfAborted();
  const [ours, theirs] = InMemoryTransport.createLinkedPair();
  let abort = () => {};
  const response = new Promise<JSONRPCMessage>((resolve, reject) => {
    ours.onmessage = (message) => {
      // Only the answer counts; the server sends no notifications (nothing here asks for progress).
      if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id === request.id) resolve(message);
    };
    abort = () => reject(signal.reason);
  });
  // Awaited below; this only keeps a client leaving while the server connects from being an unhandled rejection.
  response.catch(() => {});
  signal.addEventListener("abort", abort, { once: true });
  try {
    await server.connect(theirs);
    await ours.start();
    await ours.send(request);
    return await response;
  } finally {
    signal.removeEventListener("abort", abort);
    await ours.close();
  }
}

export interface ModernReply {
  readonly status: number;
  /** Undefined for a notification (202, no body). */
  readonly body?: unknown;
}

/**
 * Answers one modern request. `server` is built for this request and caller alone (as for the
 * legacy path), so what it lists and runs is decided from the credential as it is now.
 */
export async function answerModern(
  route: Extract<McpRoute, { kind: "modern" }>,
  headers: McpHeaders,
  server: Server,
  signal: AbortSignal,
): Promise<ModernReply | RpcRejection> {
  const { message, version } = route;
  const id = idOf(message);
  if (!MODERN_PROTOCOL_VERSIONS.includes(version)) {
    return reject(400, id, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", {
      supported: [...MODERN_PROTOCOL_VERSIONS],
      requested: version,
    });
  }
  // The core revision defines no client notification over HTTP: accepted and dropped, as the spec allows.
  if (!isJSONRPCRequest(message)) return { status: 202 };
  const headerProblem = checkStandardHeaders(message, version, headers);
  if (headerProblem) return headerProblem;
  if (message.method === "server/discover") {
    return { status: 200, body: { jsonrpc: "2.0", id: message.id, result: completeResult(message.method, discoverResult()) } };
  }
  // Everything else (`initialize`, `ping`, `logging/setLevel`: gone in this revision; resources and
  // prompts: not served) is a method this server does not implement, which HTTP says with a 404.
  if (!SDK_METHODS.has(message.method)) {
    return reject(404, message.id, ErrorCode.MethodNotFound, `Method not found: ${message.method}`);
  }
  const response = await exchange(server, message, signal);
  if ("result" in response && isObject(response.result)) {
    return { status: 200, body: { ...response, result: completeResult(message.method, response.result) } };
  }
  // A JSON-RPC error from the handler (an unknown tool, our own failure) travels in-band, with 200.
  return { status: 200, body: response };
}
