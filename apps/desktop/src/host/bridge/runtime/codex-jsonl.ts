import type { RuntimeEvent } from "./runtime-adapter";

/**
 * Reads `codex exec --json` lines: `thread.started`, `turn.started`, `item.started|updated|completed`
 * (items: `agent_message` with `text`, `reasoning`, `command_execution`, `file_change`,
 * `mcp_tool_call`, `web_search`, `todo_list`, `error`), `turn.completed` (with `usage`),
 * `turn.failed` and `error`. The final answer is the last completed agent message.
 */
export class CodexJsonl {
  #lastMessage: string | null = null;
  #failure: string | null = null;
  /** Commands and other actions Codex took inside its sandbox (reported, never gated: see codex-runtime.ts). */
  readonly actions: string[] = [];

  get finalMessage(): string | null {
    return this.#lastMessage;
  }

  get failure(): string | null {
    return this.#failure;
  }

  events(line: unknown): RuntimeEvent[] {
    if (!isRecord(line)) return [];
    switch (line.type) {
      case "item.completed":
        return this.#item(line.item);
      case "turn.completed":
        return isRecord(line.usage)
          ? [
              {
                type: "usage",
                usage: {
                  model: null,
                  inputTokens: typeof line.usage.input_tokens === "number" ? line.usage.input_tokens : null,
                  outputTokens: typeof line.usage.output_tokens === "number" ? line.usage.output_tokens : null,
                },
              },
            ]
          : [];
      case "turn.failed":
        this.#failure = isRecord(line.error) && typeof line.error.message === "string" ? line.error.message : "the turn failed";
        return [];
      case "error":
        this.#failure = typeof line.message === "string" ? line.message : "Codex reported an error";
        return [];
      default:
        return [];
    }
  }

  #item(item: unknown): RuntimeEvent[] {
    if (!isRecord(item)) return [];
    if (item.type === "agent_message" && typeof item.text === "string") {
      this.#lastMessage = item.text;
      return [{ type: "text", text: item.text }];
    }
    if (item.type === "command_execution" && typeof item.command === "string") this.actions.push(`command: ${item.command}`);
    else if (item.type === "file_change") this.actions.push("file change");
    else if (item.type === "mcp_tool_call") this.actions.push(`tool: ${String(item.server)}/${String(item.tool)}`);
    else if (item.type === "web_search") this.actions.push(`web search: ${String(item.query)}`);
    return [];
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
