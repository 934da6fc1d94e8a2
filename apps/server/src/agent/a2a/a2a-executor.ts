import { randomUUID } from "node:crypto";
import type { Message } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext, type User } from "@a2a-js/sdk/server";
import { AgentMessageRequest } from "@tandem/core";
import type { Request, Response } from "express";
import { presentedToken } from "../../auth/authenticator";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { ApiError } from "../../http/errors";
import { type RpcSlots, sendAgentMessage } from "../../people/messaging/agent-message";
import { idempotencyKeyOf, requestHash, runOncePerKey } from "../../people/messaging/idempotency";
import type { A2AAgent } from "./a2a-agents";

/** How often a run in progress checks that the caller's credential still holds (a revoked key stops it). */
const CREDENTIAL_CHECK_MS = 1_000;

function agentMessage(contextId: string, text: string, metadata?: Record<string, unknown>): Message {
  return {
    role: Role.ROLE_AGENT,
    messageId: randomUUID(),
    contextId,
    taskId: "",
    parts: [{ content: { $case: "text", value: text }, mediaType: "text/plain", filename: "", metadata: undefined }],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** What a refusal or failure of the run becomes: the caller's fault is `rejected`, a cancelled run `canceled`, the rest `failed`. */
function stateFor(error: ApiError): TaskState {
  if (error.status === 499) return TaskState.TASK_STATE_CANCELED;
  if (error.status >= 400 && error.status < 500 && error.code !== "credential_revoked") return TaskState.TASK_STATE_REJECTED;
  return TaskState.TASK_STATE_FAILED;
}

/**
 * Answers one A2A request with the agent RPC of `POST /agent/message {to: <handle>}` (same run,
 * same grant, same limits, same idempotency key header), as a single agent `Message`; a refusal or
 * failure is a task in a final state whose status message says why (A2A's way to decline). On
 * `message/stream`, a person's agent's answer comes as it is written: a task (`working`), status
 * updates with the text, and a last one `completed` with the whole answer.
 *
 * The run stops when the caller goes away or its credential is revoked mid-run (checked every
 * second): the RPC then stores nothing, as a cancelled `POST /agent/message` does.
 */
export class AgentRpcExecutor implements AgentExecutor {
  readonly #controller = new AbortController();
  #revoked = false;

  constructor(
    private readonly app: AppContext,
    private readonly principal: UserPrincipal,
    private readonly agent: A2AAgent,
    private readonly slots: RpcSlots,
    private readonly req: Request,
    private readonly res: Response,
  ) {}

  /** The caller as the SDK's context carries it. */
  get user(): User {
    const { username } = this.principal;
    return { isAuthenticated: true, userName: username };
  }

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { contextId, taskId, userMessage } = context;
    const timestamp = () => this.app.clock.iso();
    // A stream becomes a task at the answer's first text: `working` status updates carry the text as
    // it arrives, and the last update (completed, input required, failed…) ends the stream.
    let working = false;
    const onText = (delta: string) => {
      if (delta === "") return;
      if (!working) {
        working = true;
        bus.publish(
          AgentEvent.task({
            id: taskId,
            contextId,
            status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: timestamp() },
            artifacts: [],
            history: [userMessage],
            metadata: undefined,
          }),
        );
      }
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_WORKING, message: { ...agentMessage(contextId, delta), taskId }, timestamp: timestamp() },
          metadata: undefined,
        }),
      );
    };
    /** The task's end: its last status update on a stream under way, else the whole task in that state. */
    const end = (state: TaskState, message: Message, metadata: Record<string, unknown>) => {
      const status = { state, message: { ...message, taskId }, timestamp: timestamp() };
      bus.publish(
        working
          ? AgentEvent.statusUpdate({ taskId, contextId, status, metadata })
          : AgentEvent.task({ id: taskId, contextId, status, artifacts: [], history: [userMessage], metadata }),
      );
    };
    try {
      const answer = await this.#ask(textOf(userMessage), this.#streaming ? onText : undefined);
      if ("status" in answer && answer.status === "requires_action") {
        // Paused on a tool its owner decides on (an escalation): A2A's INPUT_REQUIRED; the answer
        // comes later in the pair's conversation, as for POST /agent/message.
        const waiting = agentMessage(
          contextId,
          `${answer.agentName}'s owner must decide on a tool call first; the answer will come as a message.`,
          {
            escalationIds: answer.escalationIds ?? [],
            conversationId: answer.conversationId,
          },
        );
        end(TaskState.TASK_STATE_INPUT_REQUIRED, waiting, { escalationIds: answer.escalationIds ?? [] });
        return;
      }
      const reply = agentMessage(contextId, answer.response ?? "", {
        agentName: answer.agentName,
        toolsUsed: answer.toolsUsed,
        conversationId: answer.conversationId,
      });
      if (working) end(TaskState.TASK_STATE_COMPLETED, reply, { agentName: answer.agentName });
      else bus.publish(AgentEvent.message(reply));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const refusal = agentMessage(contextId, error.message, { error: error.code });
      end(stateFor(error), refusal, { error: error.code, status: error.status });
    } finally {
      bus.finished();
    }
  }

  /** Nothing is kept to cancel later: the answer comes within the request that asked. */
  async cancelTask(): Promise<void> {}

  /** Whether this is `message/stream` (v1 `SendStreamingMessage`): progress is sent as it comes. */
  get #streaming(): boolean {
    const method = (this.req.body as { method?: unknown } | undefined)?.method;
    return method === "message/stream" || method === "SendStreamingMessage";
  }

  async #ask(message: string, onText?: (delta: string) => void) {
    const body = AgentMessageRequest.safeParse({ to: this.agent.handle, message });
    if (!body.success) {
      const reason = body.error.issues[0]?.message ?? "is not valid";
      throw new ApiError(400, "invalid_message", `The message's text ${reason}`);
    }
    const onClose = () => {
      if (!this.res.writableFinished) this.#controller.abort();
    };
    this.res.once("close", onClose);
    const watch = setInterval(() => void this.#checkCredential(), CREDENTIAL_CHECK_MS);
    try {
      const key = idempotencyKeyOf(this.req.headers["idempotency-key"]);
      const { body: answer } = await runOncePerKey(
        this.app.db,
        this.app.clock,
        { userId: this.principal.userId, key, hash: requestHash(body.data) },
        () => sendAgentMessage(this.app, this.principal, body.data, this.#controller.signal, this.slots, "a2a", onText),
      );
      // A handle always names an agent; anything else would be a resolver's bug.
      if (answer.mode !== "agent") throw new Error(`A2A handle ${this.agent.handle} did not reach an agent`);
      return answer;
    } catch (error) {
      if (this.#revoked) throw new ApiError(401, "credential_revoked", "The credential was revoked during the run; nothing was stored");
      throw error;
    } finally {
      clearInterval(watch);
      this.res.off("close", onClose);
    }
  }

  async #checkCredential(): Promise<void> {
    const token = presentedToken(this.req.headers);
    const still = token ? await this.app.authenticator.verify(token).catch(() => null) : null;
    if (still) return;
    this.#revoked = true;
    this.#controller.abort();
  }
}

/** The message's text parts, in order; other parts (files, data) are not read. */
function textOf(message: Message): string {
  return message.parts
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .filter((text) => text !== "")
    .join("\n");
}
