// A2A (Agent2Agent, v1.0 with v0.3 compatibility) for Tandem's agents, through the official SDK:
// `GET /a2a/<handle>/.well-known/agent-card.json` (public), `POST /a2a/<handle>` (JSON-RPC:
// `SendMessage`/`message/send`, `SendStreamingMessage`/`message/stream`) and `GET /a2a` (the cards
// the caller may reach). Outside `/api/v1`, like `/mcp`: A2A has its own wire.
//
// A message is answered by `sendAgentMessage`, exactly as `POST /agent/message {to: <handle>}`:
// the same grant (the owner's permission for the caller), the same limits, the same stored
// exchange. Whether the caller may ask at all is checked before the SDK sees the request, so a
// caller without a grant gets a 403 and nothing runs. The SDK is loaded by the first request that
// needs it (a2a-handler.ts), not at start.

import { DEFAULT_BODY_LIMIT } from "@tandem/core";
import { type NextFunction, type Request, type Response, Router } from "express";
import { requireOAuthScope, type UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { isStorageFailure } from "../../db/storage-failure";
import { setRequestUser } from "../../http/access-log";
import { ApiError, storageUnavailable } from "../../http/errors";
import { jsonParser, readBody } from "../../http/router";
import { RpcSlots } from "../../people/messaging/agent-message";
import { publicBase } from "../mcp-server/mcp-route";
import { type A2AAgent, type AgentResolver, managedAgents, personAgents } from "./a2a-agents";

type A2AHandler = typeof import("./a2a-handler");

let sdk: Promise<A2AHandler> | undefined;

/** The SDK's parts, loaded on first use (a failed load is tried again by the next request). */
function loadA2AHandler(): Promise<A2AHandler> {
  sdk ??= import("./a2a-handler").catch((error: unknown) => {
    sdk = undefined;
    throw error;
  });
  return sdk;
}

export const A2A_PATH = "/a2a";
export const AGENT_CARD_SUFFIX = "/.well-known/agent-card.json";

/** JSON-RPC's own codes for what it names (unparsable JSON, no request); Tandem's errors use -32000 with the code in `data`. */
const RPC_CODES: Readonly<Record<string, number>> = { invalid_json: -32700, json_too_deep: -32600 };

const parser = jsonParser(DEFAULT_BODY_LIMIT);

function sendRpcError(res: Response, error: ApiError, id: unknown = null): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json({
    jsonrpc: "2.0",
    id: typeof id === "string" || typeof id === "number" ? id : null,
    error: { code: RPC_CODES[error.code] ?? -32000, message: error.message, data: { error: error.code } },
  });
}

function agentNotFound(handle: string): ApiError {
  return new ApiError(404, "agent_not_found", `No agent "${handle}"`);
}

/** The caller, by API key or OAuth token as on `/api/v1`; an app must have been allowed to message as the person. */
async function authenticate(app: AppContext, req: Request, res: Response): Promise<UserPrincipal> {
  const principal = (await app.authenticator.authenticate(req.headers, req.socket.remoteAddress ?? "unknown", "user", [])) as UserPrincipal;
  requireOAuthScope(principal, "agent.message:send");
  setRequestUser(res, principal.userId);
  return principal;
}

export function a2aRouter(app: AppContext, resolvers: readonly AgentResolver[] = [personAgents(app), managedAgents(app)]): Router {
  const router = Router();
  const slots = new RpcSlots(app.shared);

  const resolve = async (handle: string): Promise<{ agent: A2AAgent; resolver: AgentResolver } | null> => {
    for (const resolver of resolvers) {
      const agent = await resolver.resolve(handle);
      if (agent) return { agent, resolver };
    }
    return null;
  };

  const guard =
    (handler: (req: Request, res: Response, next: NextFunction) => Promise<void>) =>
    async (req: Request, res: Response, next: NextFunction) => {
      try {
        await handler(req, res, next);
      } catch (error) {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (error instanceof ApiError) return sendRpcError(res, error, (req.body as { id?: unknown } | undefined)?.id);
        if (isStorageFailure(error)) {
          app.logger.error({ err: error }, "storage failed");
          return sendRpcError(res, storageUnavailable());
        }
        app.logger.error({ err: error }, "a2a request failed");
        sendRpcError(res, new ApiError(500, "internal_error", "The server failed to handle this request; it has been logged"));
      }
    };

  // The cards the caller may ask (people who granted the caller's agent access, and managed agents).
  router.get(
    A2A_PATH,
    guard(async (req, res) => {
      const principal = await authenticate(app, req, res);
      const base = publicBase(app, req);
      const agents = (await Promise.all(resolvers.map((resolver) => resolver.reachable(principal)))).flat();
      const { agentCardJson } = await loadA2AHandler();
      res.json({ success: true, agents: agents.map((agent) => agentCardJson(agent, base)) });
    }),
  );

  // Public: a card says who the agent is and how to authenticate, never what it holds.
  router.get(
    `${A2A_PATH}/:handle${AGENT_CARD_SUFFIX}`,
    guard(async (req, res) => {
      const handle = String(req.params.handle);
      const found = await resolve(handle);
      if (!found) throw agentNotFound(handle);
      const { agentCardJson } = await loadA2AHandler();
      res.set({ "access-control-allow-origin": "*", "cache-control": "public, max-age=300" });
      res.json(agentCardJson(found.agent, publicBase(app, req)));
    }),
  );

  router.post(
    `${A2A_PATH}/:handle`,
    guard(async (req, res, next) => {
      const principal = await authenticate(app, req, res);
      const handle = String(req.params.handle);
      const found = await resolve(handle);
      if (!found) throw agentNotFound(handle);
      // No grant, nothing run: refused before the body is even read.
      if (!(await found.resolver.mayAsk(found.agent, principal))) {
        throw new ApiError(
          403,
          "agent_permission_required",
          `${found.agent.name} is not open to you; ask its owner first (POST /api/v1/network/request with to: ${found.agent.handle})`,
        );
      }
      await readBody(parser, req, res);
      const { answerRpc } = await loadA2AHandler();
      answerRpc(app, principal, found.agent, publicBase(app, req), slots, req, res, next);
    }),
  );

  router.all([A2A_PATH, `${A2A_PATH}/:handle`], (req, res) => {
    res.set("allow", req.path === A2A_PATH ? "GET" : "POST");
    sendRpcError(res, new ApiError(405, "method_not_allowed", `${req.method} ${req.path} is not supported`));
  });
  return router;
}
