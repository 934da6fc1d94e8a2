import type { RuntimeEvent, RuntimeUsage } from "./runtime-adapter";

/**
 * Reads Claude Code's `--output-format stream-json --verbose` lines: `system` (subtype `init`,
 * with the model), `assistant` (content blocks: `text`, `tool_use`, `thinking`), `user` (tool
 * results), and one final `result` (`subtype`, `is_error`, `result`, `usage`). Other types are
 * ignored. Tool calls are not taken from here: the PreToolUse hook reports and gates them.
 */
export class ClaudeStreamJson {
  #model: string | null = null;
  #sawResult = false;

  get sawResult(): boolean {
    return this.#sawResult;
  }

  events(line: unknown): RuntimeEvent[] {
    if (!isRecord(line)) return [];
    switch (line.type) {
      case "system":
        if (line.subtype === "init" && typeof line.model === "string") this.#model = line.model;
        return [];
      case "assistant":
        return textBlocks(line.message).map((text) => ({ type: "text", text }));
      case "result":
        return this.#result(line);
      default:
        return [];
    }
  }

  #result(line: Record<string, unknown>): RuntimeEvent[] {
    this.#sawResult = true;
    const events: RuntimeEvent[] = [];
    if (isRecord(line.usage)) events.push({ type: "usage", usage: this.#usage(line) });
    const isError = line.is_error === true || (typeof line.subtype === "string" && line.subtype !== "success");
    const text = typeof line.result === "string" ? line.result : isError ? `Claude Code stopped (${String(line.subtype)})` : "";
    events.push({ type: "result", text, isError });
    return events;
  }

  #usage(line: Record<string, unknown>): RuntimeUsage {
    const usage = line.usage as Record<string, unknown>;
    const count = (...keys: string[]) => {
      const values = keys.map((key) => usage[key]).filter((value): value is number => typeof value === "number");
      return values.length > 0 ? values.reduce((sum, value) => sum + value, 0) : null;
    };
    return {
      model: this.#model ?? firstModel(line.modelUsage),
      inputTokens: count("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
      outputTokens: count("output_tokens"),
    };
  }
}

function textBlocks(message: unknown): string[] {
  if (!isRecord(message) || !Array.isArray(message.content)) return [];
  return message.content
    .filter((block) => isRecord(block) && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string);
}

function firstModel(modelUsage: unknown): string | null {
  return isRecord(modelUsage) ? (Object.keys(modelUsage)[0] ?? null) : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
