import { writeHookFiles } from "../hook/hook-files";
import { type HookServer, startHookServer } from "../hook/hook-server";
import { ClaudeStreamJson } from "./claude-stream-json";
import { runJsonLines } from "./json-lines-process";
import type { RuntimeAdapter, RuntimeEvent, RuntimeTask } from "./runtime-adapter";
import { summarizeToolInput } from "./tool-input-summary";

/**
 * Claude Code, headless: `claude -p <prompt> --output-format stream-json --verbose`, with every tool
 * call gated by a PreToolUse hook (`--settings`) that asks the desktop through a loopback endpoint.
 * `--permission-mode default` keeps the user's configured mode (say, bypassPermissions) from
 * applying to a peer's task; the hook's deny wins over any allow rule in any case.
 */
/** The CLI's name on PATH, unless the host's options name another command. */
export const CLAUDE_COMMAND = "claude";

export class ClaudeCodeRuntime implements RuntimeAdapter {
  readonly runtime = "claude-code" as const;
  readonly runsWithoutTools = true;
  #hookServer: Promise<HookServer> | undefined;

  constructor(private readonly command = CLAUDE_COMMAND) {}

  async *run(task: RuntimeTask): AsyncIterable<RuntimeEvent> {
    this.#hookServer ??= startHookServer();
    const hookServer = await this.#hookServer;
    // Decisions arrive through the hook while Claude waits; they are reported with the next line it prints.
    const decided: RuntimeEvent[] = [];
    const { token, unregister } = hookServer.register(async (input) => {
      const decision = await task.requestTool({ toolName: input.tool_name, toolInputSummary: summarizeToolInput(input.tool_input) });
      decided.push({ type: "tool", toolName: input.tool_name, decision });
      return { decision };
    });
    const files = await writeHookFiles({ url: hookServer.url, token });
    try {
      const args = [
        "-p",
        task.prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--settings",
        files.settingsPath,
        "--permission-mode",
        "default",
        // No built-in tools, and none of the user's MCP servers: the hook, which still blocks any
        // call, is then the second wall rather than the only one.
        ...(task.noTools ? ["--tools", "", "--strict-mcp-config"] : []),
      ];
      const parser = new ClaudeStreamJson();
      try {
        for await (const line of runJsonLines(this.command, args, {
          cwd: task.workDir,
          env: { ...process.env, ...files.env },
          signal: task.signal,
          label: "Claude Code",
        })) {
          yield* decided.splice(0);
          yield* parser.events(line);
        }
      } catch (error) {
        // Claude exits non-zero after an error result; the result already says what happened.
        if (!parser.sawResult || task.signal.aborted) throw error;
      }
      yield* decided.splice(0);
      if (!parser.sawResult) throw new Error("Claude Code ended without a result");
    } finally {
      unregister();
      await files.remove();
    }
  }

  async close(): Promise<void> {
    const server = this.#hookServer;
    this.#hookServer = undefined;
    await (await server?.catch(() => undefined))?.close();
  }
}
