// The MCP endpoint's handler on the official SDK (see mcp-route.ts), in a module of its own so the
// SDK is loaded by the first MCP request rather than at start.

import { toNodeHandler } from "@modelcontextprotocol/node";
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpHandlerRequestOptions,
  type McpRequestContext,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { isTimeZone } from "@tandem/core";
import type { Request } from "express";
import { presentedToken } from "../../auth/authenticator";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { mcpServerFor } from "./mcp-tools";

function timezoneOf(headers: Headers): string {
  const zone = headers.get("x-tandem-timezone")?.trim();
  return zone && zone.length <= 64 && isTimeZone(zone) ? zone : "UTC";
}

/** The caller, as our authentication found it, handed through the SDK to the server factory. */
const PRINCIPAL = "tandem/principal";

function authInfoOf(principal: UserPrincipal, req: Request): AuthInfo {
  const { credential } = principal;
  return {
    token: presentedToken(req.headers) ?? "",
    clientId: credential.kind === "oauth" ? credential.clientId : credential.id,
    scopes: [...credential.scopes],
    extra: { [PRINCIPAL]: principal },
  };
}

/**
 * A fresh server for one request, for the caller the request authenticated as. The SDK calls it for
 * either revision; the principal comes only from our own authentication (through `authInfo`).
 */
function serverFactory(app: AppContext) {
  return ({ authInfo, requestInfo }: McpRequestContext) => {
    const principal = authInfo?.extra?.[PRINCIPAL] as UserPrincipal | undefined;
    if (!principal || !requestInfo) throw new Error("an MCP server was asked for without an authenticated request");
    // The request's signal is aborted when the HTTP client goes away (the SDK's Node adapter ties it to the response).
    return mcpServerFor({ app, principal, timezone: timezoneOf(requestInfo.headers), signal: requestInfo.signal });
  };
}

/**
 * 2025-11-25 and earlier, statelessly: a fresh server and transport per request, no session id, so
 * nothing outlives the request and every request is authenticated on its own. Not the SDK's own
 * stateless fallback, which answers in event streams: Tandem's answers stay single JSON bodies.
 */
function legacyHandler(factory: ReturnType<typeof serverFactory>) {
  return async (request: globalThis.Request, options: McpHandlerRequestOptions = {}): Promise<globalThis.Response> => {
    const server = factory({ era: "legacy", authInfo: options.authInfo, requestInfo: request });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, options);
    } finally {
      // Closes the transport too: nothing of this request is left behind.
      await server.close();
    }
  };
}

/**
 * Both revisions on one URL, as the SDK's dual-era pattern has it: `isLegacyRequest` (the very
 * classification `createMcpHandler` runs) sends a request without the 2026-07-28 `_meta` envelope
 * to the legacy handler, everything else to the SDK's modern handler, which validates the envelope
 * and the mirrored headers, answers `server/discover` and refuses what the revision removed.
 */
export function mcpHandler(app: AppContext) {
  const factory = serverFactory(app);
  const onerror = (error: Error) => app.logger.debug({ err: error }, "mcp request refused or failed");
  const modern = createMcpHandler(factory, { legacy: "reject", onerror });
  const legacy = legacyHandler(factory);
  const handle = toNodeHandler(
    {
      fetch: async (request, options) =>
        (await isLegacyRequest(request, options?.parsedBody)) ? legacy(request, options) : modern.fetch(request, options),
    },
    { onerror: (error) => app.logger.error({ err: error }, "mcp request failed") },
  );
  return { handle, authInfoOf };
}

export type McpHandler = ReturnType<typeof mcpHandler>;
