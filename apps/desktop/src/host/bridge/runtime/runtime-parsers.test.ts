import { describe, expect, it } from "vitest";
import { fitReply } from "../injector";
import { ClaudeStreamJson } from "./claude-stream-json";
import { CodexJsonl } from "./codex-jsonl";
import { summarizeToolInput } from "./tool-input-summary";

describe("ClaudeStreamJson", () => {
  it("reports assistant text, usage with the init model, and the final result", () => {
    const parser = new ClaudeStreamJson();
    const events = [
      { type: "system", subtype: "init", model: "claude-opus-4-1", tools: ["Bash"] },
      {
        type: "assistant",
        message: {
          content: [
            { type: "thinking", thinking: "…" },
            { type: "text", text: "Looking." },
            { type: "tool_use", id: "t", name: "Bash", input: {} },
          ],
        },
      },
      { type: "user", message: { content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] } },
      { type: "something_new" },
      {
        type: "result",
        subtype: "success",
        is_error: false,
        result: "Done.",
        usage: { input_tokens: 10, cache_read_input_tokens: 5, output_tokens: 3 },
      },
    ].flatMap((line) => parser.events(line));
    expect(events).toEqual([
      { type: "text", text: "Looking." },
      { type: "usage", usage: { model: "claude-opus-4-1", inputTokens: 15, outputTokens: 3 } },
      { type: "result", text: "Done.", isError: false },
    ]);
    expect(parser.sawResult).toBe(true);
  });

  it("marks error results", () => {
    const parser = new ClaudeStreamJson();
    expect(parser.events({ type: "result", subtype: "error_max_turns", is_error: true })).toEqual([
      { type: "result", text: "Claude Code stopped (error_max_turns)", isError: true },
    ]);
  });
});

describe("CodexJsonl", () => {
  it("keeps the last agent message as the answer, usage from the turn, actions seen", () => {
    const parser = new CodexJsonl();
    const events = [
      { type: "thread.started", thread_id: "th_1" },
      { type: "turn.started" },
      { type: "item.completed", item: { id: "i0", type: "reasoning", text: "…" } },
      { type: "item.completed", item: { id: "i1", type: "command_execution", command: "ls", status: "completed", exit_code: 0 } },
      { type: "item.completed", item: { id: "i2", type: "agent_message", text: "Here it is." } },
      { type: "turn.completed", usage: { input_tokens: 20, cached_input_tokens: 5, output_tokens: 7 } },
    ].flatMap((line) => parser.events(line));
    expect(events).toEqual([
      { type: "text", text: "Here it is." },
      { type: "usage", usage: { model: null, inputTokens: 20, outputTokens: 7 } },
    ]);
    expect(parser.finalMessage).toBe("Here it is.");
    expect(parser.actions).toEqual(["command: ls"]);
    expect(parser.failure).toBeNull();
  });

  it("records a failed turn", () => {
    const parser = new CodexJsonl();
    parser.events({ type: "turn.failed", error: { message: "quota" } });
    expect(parser.failure).toBe("quota");
  });
});

describe("summaries and replies", () => {
  it("summarises a tool call by its telling fields, within 500 characters", () => {
    expect(summarizeToolInput({ command: "ls -la", description: "List", timeout: 5 })).toBe("command: ls -la\ndescription: List");
    expect(summarizeToolInput({ todos: [1] })).toBe('{"todos":[1]}');
    expect(summarizeToolInput({ command: "x".repeat(600) })).toHaveLength(500);
  });

  it("cuts a reply to the wire's 32 KiB", () => {
    expect(fitReply("short")).toBe("short");
    const cut = fitReply("é".repeat(40_000));
    expect(Buffer.byteLength(cut, "utf8")).toBeLessThanOrEqual(32 * 1024);
    expect(cut.endsWith("[answer cut to fit 32 KiB]")).toBe(true);
  });
});
