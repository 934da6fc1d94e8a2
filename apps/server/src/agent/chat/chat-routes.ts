import type { Request, Response } from "express";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { ApiError, tooManyRequests } from "../../http/errors";
import { HANDLED, type RouteHandlers } from "../../http/router";
import { appendMessages, deleteIfEmpty } from "../conversations/conversation-store";
import { type AgentEvent, type AgentRunResult, runAgent } from "../runner/agent-runner";
import { type RunMeter, startRun } from "../usage/meters";
import { ChatStream } from "./chat-stream";
import { type ChatBody, type PreparedTurn, prepareTurn } from "./chat-turn";

/** Runs one user may have going at once, over all instances; more wait for nothing and get a 429. */
export const MAX_RUNS_PER_USER = 8;

type ChatRouteId = "chat";

/**
 * Counts the user's runs, whichever way they came in (`POST /chat`, the MCP `agent_chat` tool, a
 * briefing or summary) and whichever instance runs them (`app.shared`); the slot is given back
 * when the run ends, however it ends, and a crashed instance's slots come free with their lease.
 */
export async function withChatRunSlot<T>(app: AppContext, userId: number, run: () => Promise<T>): Promise<T> {
  const release = await app.shared.acquireSlot("chat-runs", String(userId), MAX_RUNS_PER_USER);
  if (!release) throw tooManyRequests(5);
  try {
    return await run();
  } finally {
    release();
  }
}

/**
 * One whole chat turn answered at once, as `POST /chat` with `stream: false` answers it: the turn
 * is prepared under the caller's grant, run, and stored. A model that fails is a 502.
 */
export function answerChat(app: AppContext, principal: UserPrincipal, body: ChatBody, signal: AbortSignal) {
  return withChatRunSlot(app, principal.userId, async () => {
    const turn = await prepareTurn(app, principal, body);
    return answerTurn(app, principal, body, turn, await meterTurn(app, principal, turn), signal);
  });
}

/**
 * Counts the turn's run against the caller's budgets before the model is called (402
 * `budget_exceeded` when one is used up; the conversation it had just created goes again).
 */
async function meterTurn(app: AppContext, principal: UserPrincipal, turn: PreparedTurn): Promise<RunMeter> {
  try {
    return await startRun(app, { userId: principal.userId, apiKeyId: principal.credential.id }, { source: "chat", model: turn.model });
  } catch (error) {
    if (turn.isNewConversation) await deleteIfEmpty(app.db, turn.conversationId);
    throw error;
  }
}

export function chatHandlers(app: AppContext): RouteHandlers<ChatRouteId> {
  return {
    chat: ({ input, principal, req, res }) =>
      withChatRunSlot(app, principal.userId, async () => {
        const turn = await prepareTurn(app, principal, input.body);
        const meter = await meterTurn(app, principal, turn);
        if (input.body.stream) {
          await streamTurn(app, principal, input.body, turn, meter, req, res);
          return HANDLED;
        }
        return answerTurn(app, principal, input.body, turn, meter, clientGoneSignal(req, res));
      }),
  };
}

/** Stops the run (or any model call a request makes) when the client goes away before the answer is complete. */
export function clientGoneSignal(req: Request, res: Response): AbortSignal {
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  req.on("aborted", () => controller.abort());
  // Gone before this was asked (while the request was read or authenticated): no event will come.
  if (req.socket.destroyed) controller.abort();
  return controller.signal;
}

async function run(
  app: AppContext,
  body: ChatBody,
  turn: PreparedTurn,
  meter: RunMeter,
  signal: AbortSignal,
  onEvent: (event: AgentEvent) => void,
) {
  return runAgent({
    app,
    model: turn.model,
    grant: turn.grant,
    timezone: body.userTimezone,
    instructions: turn.instructions,
    blockNonce: turn.blockNonce,
    messages: turn.messages,
    temperature: body.temperature,
    signal,
    onEvent,
    onStep: meter.onStep,
  });
}

/**
 * Stores the turn once the run is over. A finished answer is stored complete; one cut short (the
 * client left, or time ran out) is stored as far as it got, marked incomplete; a failed run stores
 * nothing, and a conversation it had just created goes again.
 */
async function settle(app: AppContext, principal: UserPrincipal, body: ChatBody, turn: PreparedTurn, result: AgentRunResult) {
  // Its tokens were metered step by step (the run's meter).
  if (result.status === "failed") {
    if (turn.isNewConversation) await deleteIfEmpty(app.db, turn.conversationId);
    return null;
  }
  const [, answerId] = await appendMessages(
    app.db,
    turn.conversationId,
    [
      {
        role: "user",
        senderType: "human",
        senderId: String(principal.userId),
        senderLabel: principal.username,
        content: body.message,
        status: "complete",
      },
      {
        role: "assistant",
        senderType: "agent",
        senderId: null,
        senderLabel: "Tandem",
        content: result.text,
        status: result.status === "completed" ? "complete" : "incomplete",
        toolsUsed: result.toolsUsed,
        model: turn.model.modelId,
      },
    ],
    app.clock.iso(),
  );
  return answerId ?? null;
}

function completionStatus(result: AgentRunResult): "completed" | "incomplete" | "failed" | "budget_exceeded" {
  if (result.status === "completed" || result.status === "budget_exceeded") return result.status;
  return result.status === "failed" ? "failed" : "incomplete";
}

async function streamTurn(
  app: AppContext,
  principal: UserPrincipal,
  body: ChatBody,
  turn: PreparedTurn,
  meter: RunMeter,
  req: Request,
  res: Response,
) {
  const signal = clientGoneSignal(req, res);
  const stream = new ChatStream(res, app.config.agentProgressMs);
  try {
    stream.write({ type: "conversation-start", conversationId: turn.conversationId });
    const result = await run(app, body, turn, meter, signal, (event) => {
      if (event.type === "tool-call-start") stream.stage = `tool:${event.toolName}`;
      if (event.type === "tool-call-end") stream.stage = "thinking";
      stream.write(event);
    });
    const messageId = await settle(app, principal, body, turn, result);
    if (result.error) stream.write({ type: "error", error: result.error });
    stream.write({
      type: "completion",
      conversationId: turn.conversationId,
      messageId,
      status: completionStatus(result),
      toolsUsed: result.toolsUsed,
      metadata: { ...result.usage, model: turn.model.alias, modelId: turn.model.modelId },
    });
  } catch (error) {
    // Headers are gone: the failure can only be told in the stream.
    app.logger.error({ err: error }, "chat stream failed");
    stream.write({ type: "error", error: error instanceof ApiError ? error.message : "The server failed while answering." });
  } finally {
    stream.end();
  }
}

async function answerTurn(
  app: AppContext,
  principal: UserPrincipal,
  body: ChatBody,
  turn: PreparedTurn,
  meter: RunMeter,
  signal: AbortSignal,
) {
  const result = await run(app, body, turn, meter, signal, () => {});
  const messageId = await settle(app, principal, body, turn, result);
  if (result.status === "failed") throw new ApiError(502, "model_failed", result.error ?? "The model failed to answer.");
  return {
    success: true,
    conversationId: turn.conversationId,
    messageId,
    response: result.text,
    toolsUsed: result.toolsUsed,
    metadata: { ...result.usage, model: turn.model.alias, modelId: turn.model.modelId },
    ...(result.status === "completed"
      ? {}
      : { incomplete: true, reason: result.status === "budget_exceeded" ? result.status : (result.error ?? result.status) }),
  };
}
