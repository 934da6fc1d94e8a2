import type { JSONSchema7 } from "@ai-sdk/provider";
// The tool helpers come from the AI SDK's utilities, not from `ai`, which a run loads when it starts.
import { jsonSchema, tool, zodSchema } from "@ai-sdk/provider-utils";
import type { ToolSet } from "ai";
import type { z } from "zod";
import { ApiError } from "../../http/errors";
import { newBlockNonce, renderBlock } from "../prompt/untrusted-blocks";
import type { AnyAgentTool, ToolRunContext } from "./agent-tool";
import { capResult } from "./result-cap";

/**
 * A tool call that failed in a way the model should hear about and may recover from (wrong
 * arguments, a note that does not exist, a refusal). The AI SDK turns an error thrown by
 * `execute` into a tool-error result the model reads as text (`error-text`), and the run goes on.
 */
export class ToolFailure extends Error {
  override readonly name = "ToolFailure";

  /** The SDK shows the model `String(error)`: the message alone, without a class name. */
  override toString(): string {
    return this.message;
  }
}

/** Said to the model for an error it could do nothing about; the details go to the log. */
export const UNEXPECTED_FAILURE = "the tool failed";

const MAX_ARGUMENT_PROBLEMS_CHARS = 500;

/** The JSON Schema of a tool's arguments as models (and `GET /tools`) are shown it. */
export function inputJsonSchema(agentTool: AnyAgentTool): JSONSchema7 {
  if (agentTool.parameters) return agentTool.parameters as JSONSchema7;
  return zodSchema(agentTool.input).jsonSchema as JSONSchema7;
}

function argumentProblems(error: z.ZodError): string {
  const text = error.issues.map((issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`).join("; ");
  return text.length > MAX_ARGUMENT_PROBLEMS_CHARS ? `${text.slice(0, MAX_ARGUMENT_PROBLEMS_CHARS)}…` : text;
}

/** A tool's arguments checked against its schema, or what is wrong with them, each field named. */
export function parseToolArguments(agentTool: AnyAgentTool, args: unknown): { ok: true; data: unknown } | { ok: false; problems: string } {
  const parsed = agentTool.input.safeParse(args ?? {});
  if (parsed.success) return { ok: true, data: parsed.data };
  return { ok: false, problems: `invalid arguments for ${agentTool.name}: ${argumentProblems(parsed.error)}` };
}

/**
 * Runs one tool on raw arguments: validates them, executes under the context's grant, and caps
 * the result's size. Every failure is a {@link ToolFailure} with a short message fit for the
 * model: an ApiError's own message (a refused object reads exactly as a missing one, since the
 * tools throw the same 404 for both), or {@link UNEXPECTED_FAILURE} for anything else, which is
 * logged.
 */
export async function executeTool(agentTool: AnyAgentTool, args: unknown, context: ToolRunContext): Promise<unknown> {
  if (context.signal.aborted) throw new ToolFailure("the run was cancelled");
  const parsed = parseToolArguments(agentTool, args);
  if (!parsed.ok) throw new ToolFailure(parsed.problems);
  try {
    return capResult(await agentTool.execute(parsed.data, context));
  } catch (error) {
    // A failure the tool put into words (a remote tool's own error) is said as it is.
    if (error instanceof ToolFailure) throw error;
    if (error instanceof ApiError && error.status < 500) throw new ToolFailure(error.message);
    if (!context.signal.aborted) context.app.logger.error({ err: error, tool: agentTool.name }, "agent tool failed");
    throw new ToolFailure(context.signal.aborted ? "the run was cancelled" : UNEXPECTED_FAILURE);
  }
}

export interface ToolCallHooks {
  onStart?(name: string, callId: string): void;
  onEnd?(name: string, callId: string, ok: boolean): void;
}

/**
 * Runs one call's execution at most once across instances and restarts (an escalation's recorded
 * call): `run` is the tool's own execution; the guard answers its recorded outcome instead when
 * it already ran.
 */
export type CallGuard = (run: () => Promise<unknown>) => Promise<unknown>;

export interface ToolSetOptions extends ToolCallHooks {
  /** Tools whose calls pause the run for the owner (the AI SDK's `needsApproval`). */
  readonly needsApproval?: ReadonlySet<string>;
  /** The guard of a call, by its id, when that call is one an escalation let through. */
  readonly guardCall?: (toolCallId: string) => CallGuard | undefined;
  /**
   * The nonce of the run's untrusted blocks, the one its system prompt names (see
   * prompt/untrusted-blocks.ts). Without one, a fresh nonce still fences what needs fencing.
   */
  readonly blockNonce?: string;
}

/**
 * What the model reads of a tool that is not our own (a remote MCP server's): its answer, or its
 * failure, is the remote server's text, so it goes inside an untrusted block like any other
 * content that is not the person's words. The block's closing tag needs the run's nonce, which the
 * remote server cannot know.
 */
function fenced(nonce: string, agentTool: AnyAgentTool, source: "tool-result" | "tool-error", value: unknown): string {
  return renderBlock(nonce, {
    source,
    attributes: { tool: `${agentTool.namespace}.${agentTool.remoteName ?? agentTool.name}` },
    text: typeof value === "string" ? value : (JSON.stringify(value) ?? "null"),
  });
}

/**
 * A run's tools as an AI SDK tool set, by bare name. The SDK is shown each tool's JSON Schema but
 * does not validate with it: {@link executeTool} does, so arguments that fail their schema come
 * back to the model as a short tool error like any other failure, and the hooks see every call.
 * The SDK's abort signal (the run's, with any per-tool timeout) joins the context's. The results
 * and failures of tools that are not native are fenced as untrusted ({@link fenced}), after the
 * result was capped, so a cut never removes the closing tag.
 */
export function toAiToolSet(tools: readonly AnyAgentTool[], context: ToolRunContext, options: ToolSetOptions = {}): ToolSet {
  const set: ToolSet = {};
  const nonce = options.blockNonce ?? newBlockNonce();
  for (const agentTool of tools) {
    const untrusted = agentTool.source !== "native";
    const runOne = async (args: unknown, toolCallId: string, abortSignal: AbortSignal | undefined): Promise<unknown> => {
      options.onStart?.(agentTool.name, toolCallId);
      let ok = false;
      try {
        const signal = abortSignal ? AbortSignal.any([context.signal, abortSignal]) : context.signal;
        const result = await executeTool(agentTool, args, { ...context, signal });
        ok = true;
        return untrusted ? fenced(nonce, agentTool, "tool-result", result) : result;
      } catch (error) {
        if (untrusted && error instanceof ToolFailure) throw new ToolFailure(fenced(nonce, agentTool, "tool-error", error.message));
        throw error;
      } finally {
        options.onEnd?.(agentTool.name, toolCallId, ok);
      }
    };
    set[agentTool.name] = tool<unknown, unknown, Record<string, never>>({
      description: agentTool.description,
      inputSchema: jsonSchema(() => inputJsonSchema(agentTool)),
      needsApproval: options.needsApproval?.has(agentTool.name) ?? false,
      execute: async (args, { toolCallId, abortSignal }) => {
        const guard = options.guardCall?.(toolCallId);
        return guard ? guard(() => runOne(args, toolCallId, abortSignal)) : runOne(args, toolCallId, abortSignal);
      },
    });
  }
  return set;
}
