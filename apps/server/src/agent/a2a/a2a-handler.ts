// The parts of A2A that need the official SDK (`@a2a-js/sdk`): the card's wire form and the
// JSON-RPC handler. a2a-route.ts loads this module on the first A2A request, not at start: most
// servers never get one, and the SDK (with its protocol codecs) would only slow every start.

import { AgentCard } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { jsonRpcHandler } from "@a2a-js/sdk/server/express";
import type { NextFunction, Request, Response } from "express";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { RpcSlots } from "../../people/messaging/agent-message";
import type { A2AAgent } from "./a2a-agents";
import { agentCardFor } from "./a2a-card";
import { AgentRpcExecutor } from "./a2a-executor";

/** An agent's card as JSON, for `base` (the server's public address). */
export function agentCardJson(agent: A2AAgent, base: string): unknown {
  return AgentCard.toJSON(agentCardFor(agent, base));
}

/** Answers one JSON-RPC request (its body already read) for `agent`, as `principal`, through the SDK. */
export function answerRpc(
  app: AppContext,
  principal: UserPrincipal,
  agent: A2AAgent,
  base: string,
  slots: RpcSlots,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  const card = agentCardFor(agent, base);
  const executor = new AgentRpcExecutor(app, principal, agent, slots, req, res);
  // One handler per request: the card is the handle's, and nothing (tasks included) outlives the answer.
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  // The SDK's router answers at "/" of its mount; the body is already parsed (so its own parser stands aside).
  req.url = "/";
  jsonRpcHandler({ requestHandler: handler, userBuilder: async () => executor.user, legacyCompat: { enabled: true } })(req, res, next);
}
