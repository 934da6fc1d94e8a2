import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { parseBlocks } from "../../prompt/untrusted-blocks";
import { LOCAL_MODEL_ID } from "../model-catalog";
import { decide } from "./local-policy";
import type { LocalAction, LocalTurn, ToolExchange } from "./local-turn";

/** Roughly what a tokenizer would count: usage is reported the same way as by remote models. */
const estimateTokens = (chars: number) => Math.ceil(chars / 4);

/** The line of the system prompt the runner writes for every model; the `local` one reads its date from it. */
const CONTEXT_LINE = /\btoday=(\d{4}-\d{2}-\d{2})\b/;
/** The same line's owner (a JSON string) and whether someone other than the owner is asking. */
const OWNER_FIELD = /\bowner=("(?:[^"\\]|\\.)*"); asker=(owner|other)\b/;

/** The owner's name when someone else asks (then answers say "Alex's notes"); undefined when the owner asks. */
function ownerSpokenOf(system: readonly string[]): string | undefined {
  const match = system.map((s) => OWNER_FIELD.exec(s)).find(Boolean);
  if (match?.[2] !== "other") return undefined;
  try {
    return String(JSON.parse(match[1] as string)) || "the owner";
  } catch {
    return "the owner";
  }
}

function textOf(content: readonly { type: string; text?: string }[]): string {
  return content
    .filter((part) => part.type === "text")
    .map((part) => part.text ?? "")
    .join("\n");
}

/** Reads the prompt the way any model would: the request, the content given with it, this turn's tool calls. */
export function readTurn(prompt: LanguageModelV4Prompt, available: ReadonlySet<string>): LocalTurn {
  const system = prompt.filter((m) => m.role === "system").map((m) => m.content as string);
  const today = system.map((s) => CONTEXT_LINE.exec(s)?.[1]).find(Boolean) ?? new Date().toISOString().slice(0, 10);
  let lastUser = -1;
  prompt.forEach((message, index) => {
    if (message.role === "user") lastUser = index;
  });
  const userText = lastUser >= 0 ? textOf((prompt[lastUser] as { content: { type: string; text?: string }[] }).content) : "";
  const { outside, outsideLines, blocks } = parseBlocks(userText);

  const calls = new Map<string, { toolName: string; input: Record<string, unknown> }>();
  const exchanges: ToolExchange[] = [];
  for (const message of prompt.slice(lastUser + 1)) {
    if (message.role === "assistant") {
      for (const part of message.content) {
        if (part.type === "tool-call") {
          const input = typeof part.input === "string" ? safeJson(part.input) : part.input;
          calls.set(part.toolCallId, { toolName: part.toolName, input: (input ?? {}) as Record<string, unknown> });
        }
      }
    } else if (message.role === "tool") {
      for (const part of message.content) {
        if (part.type !== "tool-result") continue;
        const made = calls.get(part.toolCallId) ?? { toolName: part.toolName, input: {} };
        const output = part.output;
        const ok = output.type === "json" || output.type === "text" || output.type === "content";
        const value = "value" in output ? output.value : (output.reason ?? "refused");
        exchanges.push({ toolName: made.toolName, input: made.input, ok, output: value });
      }
    }
  }
  return {
    request: outside,
    requestLines: outsideLines,
    readOnly: outside.length === 0,
    blocks,
    today,
    ownerName: ownerSpokenOf(system),
    available,
    exchanges,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function promptChars(prompt: LanguageModelV4Prompt): number {
  return JSON.stringify(prompt).length;
}

function usageOf(prompt: LanguageModelV4Prompt, outputChars: number): LanguageModelV4Usage {
  const input = estimateTokens(promptChars(prompt));
  const output = estimateTokens(outputChars);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: output, text: output, reasoning: undefined },
  };
}

function plan(options: LanguageModelV4CallOptions): { action: LocalAction; turn: LocalTurn } {
  const available = new Set((options.tools ?? []).filter((tool) => tool.type === "function").map((tool) => tool.name));
  const turn = readTurn(options.prompt, available);
  return { action: decide(turn), turn };
}

/** Splits an answer into word-sized deltas, so clients see it stream as they would from any model. */
function deltas(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/**
 * The embedded default model: a deterministic agent behind the same interface as remote models.
 * It receives the conversation and the toolset and answers with tool calls or text, so the runner,
 * the capability filter and the events work identically whichever provider runs.
 */
export class LocalModel implements LanguageModelV4 {
  readonly specificationVersion = "v4" as const;
  readonly provider = "tandem.local";
  readonly modelId = LOCAL_MODEL_ID;
  readonly supportedUrls = {};

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const { action, turn } = plan(options);
    const content: LanguageModelV4Content[] =
      action.kind === "answer"
        ? [{ type: "text", text: action.text }]
        : action.calls.map((c, i) => ({
            type: "tool-call",
            toolCallId: `call_${turn.exchanges.length}_${i}`,
            toolName: c.toolName,
            input: JSON.stringify(c.input),
          }));
    const outputChars = JSON.stringify(content).length;
    return {
      content,
      finishReason: { unified: action.kind === "answer" ? "stop" : "tool-calls", raw: undefined },
      usage: usageOf(options.prompt, outputChars),
      warnings: [],
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { action, turn } = plan(options);
    const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
    let outputChars = 0;
    if (action.kind === "answer") {
      parts.push({ type: "text-start", id: "t0" });
      for (const delta of deltas(action.text)) parts.push({ type: "text-delta", id: "t0", delta });
      parts.push({ type: "text-end", id: "t0" });
      outputChars = action.text.length;
    } else {
      action.calls.forEach((c, i) => {
        const input = JSON.stringify(c.input);
        outputChars += input.length;
        parts.push({ type: "tool-call", toolCallId: `call_${turn.exchanges.length}_${i}`, toolName: c.toolName, input });
      });
    }
    parts.push({
      type: "finish",
      usage: usageOf(options.prompt, outputChars),
      finishReason: { unified: action.kind === "answer" ? "stop" : "tool-calls", raw: undefined },
    });
    const signal = options.abortSignal;
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      pull(controller) {
        if (signal?.aborted) {
          controller.error(signal.reason ?? new Error("aborted"));
          return;
        }
        const next = parts.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    return { stream };
  }
}
