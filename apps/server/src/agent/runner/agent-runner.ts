import type { ModelMessage } from "ai";
import type { AppContext } from "../../context";
import type { ResolvedModel } from "../models/model-catalog";
import type { AnyAgentTool } from "../tools/agent-tool";
import type { RunGrant } from "../tools/run-grant";
import { type CallGuard, toAiToolSet } from "../tools/to-ai-tools";
import { type ToolDecisionLookup, toolsAllowedBy } from "../tools/tool-decision";
import { runToolset } from "../tools/tool-namespaces";
import { ClientGone, describeModelError, RunTimeout } from "./model-errors";
import { ThinkFilter } from "./think-filter";

/** What a run tells its caller as it goes; the chat route writes these as stream lines. */
export type AgentEvent =
  | { readonly type: "text-delta"; readonly textDelta: string }
  | { readonly type: "tool-call-start"; readonly toolName: string; readonly toolCallId: string }
  | { readonly type: "tool-call-end"; readonly toolName: string; readonly toolCallId: string; readonly ok: boolean };

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly totalTokens: number;
}

export interface AgentRunRequest {
  readonly app: AppContext;
  readonly model: ResolvedModel;
  readonly grant: RunGrant;
  readonly timezone: string;
  readonly instructions: string;
  /**
   * The nonce of the run's untrusted blocks, the one `instructions` names (`agentInstructions`'
   * `blockNonce`): the results of tools that are not our own reach the model fenced with it.
   */
  readonly blockNonce: string;
  readonly messages: ModelMessage[];
  readonly temperature?: number;
  /** Aborted by the caller: the client went away. */
  readonly signal: AbortSignal;
  readonly onEvent: (event: AgentEvent) => void;
  /**
   * Wraps each tool of the run's toolset, after the capability filter: the heartbeat records every
   * call and holds writes back. It sees only the tools the grant allows, so it cannot add one.
   */
  readonly wrapTool?: (tool: AnyAgentTool) => AnyAgentTool;
  /**
   * The owner's per-tool decisions for this run (a managed agent's tool policy), applied after the
   * capability filter: a policy can only take tools away, never add one the grant does not allow.
   */
  readonly toolDecision?: ToolDecisionLookup;
  /**
   * Told each step's model call when it ends, before the next one starts (metering: usage/meters.ts
   * `RunMeter.step`); answering true stops the run at this step boundary, status `budget_exceeded`.
   */
  readonly onStep?: (step: { usage: TokenUsage; toolCalls: number }) => Promise<boolean>;
  /**
   * Set by callers that store paused runs (escalations/): a tool whose decision is `ask` then pauses
   * the run (the AI SDK's `needsApproval`) and the run ends `requires_action` with the calls waiting
   * and the messages to resume from. Without it, `ask` fails closed (the tool is removed).
   */
  readonly canPause?: boolean;
  /** On a resume: the guard of each call an escalation let through (see `CallGuard`). */
  readonly guardCall?: (toolCallId: string) => CallGuard | undefined;
}

/** A tool call the run paused on, as the AI SDK asked for its approval. */
export interface PendingCall {
  readonly approvalId: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/**
 * `completed`: the model finished. `requires_action`: it called a tool whose decision is `ask`
 * and waits for the owner (`paused`). `cancelled`: the caller went away. `timed_out`: the wall-clock
 * limit. `failed`: the model or its provider failed (`error` says how, in words).
 * `budget_exceeded`: a step used up a budget (`onStep`) and the run stopped after it.
 */
export interface AgentRunResult {
  readonly status: "completed" | "cancelled" | "timed_out" | "failed" | "requires_action" | "budget_exceeded";
  readonly text: string;
  readonly toolsUsed: string[];
  /** The whole run's tokens. */
  readonly usage: TokenUsage;
  /** Each model call's tokens (a run with tool steps makes several), for accounting. */
  readonly calls: TokenUsage[];
  readonly error?: string;
  /** `requires_action`: the calls waiting for the owner, and the whole conversation to resume from. */
  readonly paused?: { readonly calls: PendingCall[]; readonly messages: ModelMessage[] };
}

/** The most a model may write in one step (some providers cap unknown models lower unless told). */
const MAX_OUTPUT_TOKENS = 4096;

// The AI SDK prints provider warnings to the console; the server's log is the only place for them.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const NO_ANSWER = "I stopped before I had an answer: the request needed more steps than one run may take.";

/**
 * The one agent loop: messages, the run's toolset, a step limit and a time limit, cancellation,
 * and events as it goes. Every caller (chat, heartbeat, agent messaging, guests) runs through it
 * with the grant of whoever is asking; a tool outside that grant does not exist for the run.
 */
export async function runAgent(request: AgentRunRequest): Promise<AgentRunResult> {
  // The AI SDK is loaded by the first run, not at start.
  const { isStepCount, streamText } = await import("ai");
  const { app, grant } = request;
  const { agentMaxSteps, agentTimeoutMs } = app.config;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new RunTimeout()), agentTimeoutMs);
  const onCallerAbort = () => controller.abort(new ClientGone());
  if (request.signal.aborted) onCallerAbort();
  else request.signal.addEventListener("abort", onCallerAbort, { once: true });

  const toolsUsed: string[] = [];
  const names = new Map<string, string>();
  let text = "";
  let failure: unknown;
  let usage: TokenUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  const calls: TokenUsage[] = [];
  const pending: PendingCall[] = [];
  let responseMessages: ModelMessage[] = [];
  const filter = new ThinkFilter();
  // A step used up a budget; the run stopped for it when it would otherwise have gone on.
  let overBudget = false;
  let stoppedForBudget = false;
  const emitText = (delta: string) => {
    if (!delta) return;
    text += delta;
    request.onEvent({ type: "text-delta", textDelta: delta });
  };

  try {
    // The grant's tools, less the namespaces the owner switched off, read once per run.
    const canPause = request.canPause === true;
    const toolset = toolsAllowedBy(await runToolset(app.db, grant), request.toolDecision, canPause);
    const decide = request.toolDecision;
    const asking = canPause && decide ? new Set(toolset.filter((t) => decide(t.name) === "ask").map((t) => t.name)) : undefined;
    const tools = toAiToolSet(
      request.wrapTool ? toolset.map(request.wrapTool) : toolset,
      { app, grant, timezone: request.timezone, signal: controller.signal },
      { blockNonce: request.blockNonce, needsApproval: asking, guardCall: request.guardCall },
    );
    const result = streamText({
      model: request.model.model,
      system: request.instructions,
      messages: request.messages,
      tools,
      stopWhen: [isStepCount(agentMaxSteps), () => (stoppedForBudget = overBudget)],
      onStepEnd: async (step) => {
        if (request.onStep && (await request.onStep({ usage: toUsage(step.usage), toolCalls: step.toolCalls.length }))) overBudget = true;
      },
      abortSignal: controller.signal,
      temperature: request.temperature,
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      // One retry of a 429 or 5xx; a provider that fails twice is down for this run.
      maxRetries: 1,
      // Errors arrive as stream parts below; without this the SDK also prints them.
      onError: () => {},
    });
    for await (const part of result.fullStream) {
      switch (part.type) {
        case "text-delta":
          emitText(filter.push(part.text));
          break;
        case "tool-call":
          names.set(part.toolCallId, part.toolName);
          toolsUsed.push(part.toolName);
          request.onEvent({ type: "tool-call-start", toolName: part.toolName, toolCallId: part.toolCallId });
          break;
        case "tool-result":
        case "tool-error":
          request.onEvent({
            type: "tool-call-end",
            toolName: names.get(part.toolCallId) ?? part.toolName,
            toolCallId: part.toolCallId,
            ok: part.type === "tool-result",
          });
          break;
        case "tool-approval-request":
          pending.push({
            approvalId: part.approvalId,
            toolCallId: part.toolCall.toolCallId,
            toolName: part.toolCall.toolName,
            input: part.toolCall.input,
          });
          break;
        case "error":
          failure ??= part.error;
          break;
        case "finish-step":
          calls.push(toUsage(part.usage));
          break;
        case "finish":
          usage = toUsage(part.totalUsage);
          break;
      }
    }
    emitText(filter.flush());
    if (pending.length > 0 && failure === undefined) responseMessages = await result.responseMessages;
  } catch (error) {
    failure ??= error;
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener("abort", onCallerAbort);
  }

  const reason = controller.signal.aborted ? controller.signal.reason : undefined;
  const base = { text, toolsUsed, usage, calls };
  if (reason instanceof ClientGone) return { ...base, status: "cancelled" };
  if (reason instanceof RunTimeout) return { ...base, status: "timed_out", error: describeModelError(reason) };
  if (failure !== undefined) {
    app.logger.warn({ err: failure, model: request.model.modelId, provider: request.model.provider }, "agent run failed");
    return { ...base, status: "failed", error: describeModelError(failure) };
  }
  // Over budget first: a run that may not go on asks its owner nothing.
  if (stoppedForBudget) return { ...base, status: "budget_exceeded", error: "a budget was used up; the run stopped after this step" };
  if (pending.length > 0) {
    return { ...base, status: "requires_action", paused: { calls: pending, messages: [...request.messages, ...responseMessages] } };
  }
  if (!text.trim()) {
    emitText(NO_ANSWER);
    return { ...base, text: NO_ANSWER, status: "completed" };
  }
  return { ...base, status: "completed" };
}

function toUsage(total: { inputTokens: number | undefined; outputTokens: number | undefined }): TokenUsage {
  const promptTokens = total.inputTokens ?? 0;
  const completionTokens = total.outputTokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}
