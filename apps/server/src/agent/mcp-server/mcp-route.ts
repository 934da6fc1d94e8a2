// Tandem as an MCP server: `POST /mcp` (Streamable HTTP, stateless; revisions 2026-07-28 and
// 2025-11-25, both through the official SDK v2) and the protected-resource metadata (RFC 9728)
// through which a client that gets a 401 finds where to sign in.

import { DEFAULT_BODY_LIMIT } from "@tandem/core";
import { type Request, type Response, Router } from "express";
import { presentedToken } from "../../auth/authenticator";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { isStorageFailure } from "../../db/storage-failure";
import { setRequestUser } from "../../http/access-log";
import { ApiError, storageUnavailable } from "../../http/errors";
import { jsonParser, readBody } from "../../http/router";
import { RESOURCE_SCOPES } from "../../oauth/oauth-scopes";
import type { McpHandler } from "./mcp-handler";

export const MCP_PATH = "/mcp";
export const MCP_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp";

/**
 * JSON-RPC batches (a 2025-03-26 feature that later versions dropped) are accepted up to this many
 * messages: one HTTP request costs one unit of the rate limit, so it must not carry a hundred calls.
 */
export const MAX_BATCH_MESSAGES = 4;

const parser = jsonParser(DEFAULT_BODY_LIMIT);

/** Where clients reach this server: the configured public URL, else the origin of the request. */
export function publicBase(app: AppContext, req: Request): string {
  return app.config.publicUrl?.replace(/\/+$/, "") ?? `${req.protocol}://${req.get("host")}`;
}

/** The protected-resource metadata of `/mcp` (RFC 9728). */
export function mcpResourceMetadata(base: string) {
  return {
    resource: `${base}${MCP_PATH}`,
    authorization_servers: [base],
    // What the authorization server grants: MCP clients ask for these by default.
    scopes_supported: [...RESOURCE_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Tandem",
  };
}

/** JSON-RPC's own codes for the failures it names: unparsable JSON, and JSON that is no request. */
const RPC_CODES: Readonly<Record<string, number>> = { invalid_json: -32700, json_too_deep: -32600, invalid_batch: -32600 };

/** An error as MCP clients read one: a JSON-RPC error with no id, Tandem's code in `data`. */
function sendRpcError(res: Response, error: ApiError, rpcCode = -32000): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res
    .status(error.status)
    .json({ jsonrpc: "2.0", id: null, error: { code: rpcCode, message: error.message, data: { error: error.code } } });
}

/** The 401 challenge: where the resource's metadata is, so a client can find the sign-in by itself. */
function challenge(base: string, tokenPresented: boolean): string {
  const invalid = tokenPresented ? ', error="invalid_token"' : "";
  return `Bearer realm="tandem", resource_metadata="${base}${MCP_RESOURCE_METADATA_PATH}"${invalid}`;
}

async function authenticate(app: AppContext, req: Request): Promise<UserPrincipal> {
  try {
    const principal = (await app.authenticator.authenticate(
      req.headers,
      req.socket.remoteAddress ?? "unknown",
      "user",
      [],
    )) as UserPrincipal;
    // An OAuth token must have been minted for this resource (MCP: a server accepts only tokens
    // issued for it). The verifier accepts just two audiences of our issuer, the v1 base and this.
    const { credential } = principal;
    if (credential.kind === "oauth" && !credential.audience?.endsWith(MCP_PATH)) {
      throw new ApiError(
        401,
        "invalid_token",
        `This access token was issued for another resource; ask for one with resource=<server>${MCP_PATH}`,
      );
    }
    return principal;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      const headers = { ...error.headers, "www-authenticate": challenge(publicBase(app, req), Boolean(presentedToken(req.headers))) };
      throw new ApiError(401, error.code, error.message, headers);
    }
    throw error;
  }
}

/** One MCP request: authenticated, its body read within bounds, then answered by a server for this caller alone. */
async function handlePost(app: AppContext, loadHandler: () => Promise<McpHandler>, req: Request, res: Response): Promise<void> {
  const principal = await authenticate(app, req);
  setRequestUser(res, principal.userId);
  // Authenticated before the body is read: nobody without a credential makes us parse megabytes.
  await readBody(parser, req, res);
  const body: unknown = req.body;
  if (Array.isArray(body) && (body.length === 0 || body.length > MAX_BATCH_MESSAGES)) {
    throw new ApiError(400, "invalid_batch", `A batch holds from 1 to ${MAX_BATCH_MESSAGES} messages`);
  }
  const handler = await loadHandler();
  await handler.handle(Object.assign(req, { auth: handler.authInfoOf(principal, req) }), res, body);
}

export function mcpRouter(app: AppContext): Router {
  const router = Router();
  // The MCP SDK is loaded by the first MCP request, not at start: most servers never get one.
  let handler: Promise<McpHandler> | undefined;
  const loadHandler = () => {
    handler ??= import("./mcp-handler").then(({ mcpHandler }) => mcpHandler(app));
    return handler;
  };
  router.get(MCP_RESOURCE_METADATA_PATH, (req, res) => {
    // Public, and read by browser-based clients too.
    res.set({ "access-control-allow-origin": "*", "cache-control": "public, max-age=300" });
    res.json(mcpResourceMetadata(publicBase(app, req)));
  });
  router.post(MCP_PATH, async (req, res) => {
    try {
      await handlePost(app, loadHandler, req, res);
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof ApiError) {
        sendRpcError(res, error, RPC_CODES[error.code] ?? -32000);
        return;
      }
      if (isStorageFailure(error)) {
        app.logger.error({ err: error }, "storage failed");
        sendRpcError(res, storageUnavailable());
        return;
      }
      app.logger.error({ err: error }, "mcp request failed");
      sendRpcError(res, new ApiError(500, "internal_error", "The server failed to handle this request; it has been logged"), -32603);
    }
  });
  // Stateless: there is no stream to resume (GET) and no session to end (DELETE).
  router.all(MCP_PATH, (req, res) => {
    res.set("allow", "POST");
    sendRpcError(
      res,
      new ApiError(405, "method_not_allowed", `${req.method} ${MCP_PATH} is not supported: this server is stateless, POST only`),
    );
  });
  return router;
}
