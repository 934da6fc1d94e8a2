import { CodexJsonl } from "./codex-jsonl";
import { runJsonLines } from "./json-lines-process";
import type { RuntimeAdapter, RuntimeEvent, RuntimeTask } from "./runtime-adapter";
import { truncate } from "./tool-input-summary";

/** The one approval a Codex task asks for, since Codex cannot ask per tool call. */
export const CODEX_RUN_TOOL = "codex exec (read-only sandbox)";

/**
 * Codex, headless: `codex exec --json`. Codex has no hook that could hold a tool call for the
 * owner, so the adapter (1) runs it in its most restrictive mode: `--sandbox read-only` (no writes,
 * no network for commands) with the approval policy `never` (an exec run cannot ask anyway), in an
 * empty working directory; and (2) asks the owner ONCE, before starting, whether Codex may run this
 * request at all (tool name {@link CODEX_RUN_TOOL}). Commands Codex then runs inside the sandbox
 * are not approved one by one; they can still read files the user can read. docs/desktop/bridge.md
 * explains the limitation.
 */
/** The CLI's name on PATH, unless the host's options name another command. */
export const CODEX_COMMAND = "codex";

export class CodexRuntime implements RuntimeAdapter {
  readonly runtime = "codex" as const;
  readonly runsWithoutTools = false;

  constructor(private readonly command = CODEX_COMMAND) {}

  async *run(task: RuntimeTask): AsyncIterable<RuntimeEvent> {
    const decision = await task.requestTool({
      toolName: CODEX_RUN_TOOL,
      toolInputSummary: truncate(`Codex runs this request in a read-only sandbox, without asking per command:\n${task.requestText}`, 500),
    });
    yield { type: "tool", toolName: CODEX_RUN_TOOL, decision };
    if (decision !== "allow") {
      yield { type: "result", text: "The owner did not allow Codex to work on this request.", isError: false };
      return;
    }
    const args = ["exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check", "-c", 'approval_policy="never"', task.prompt];
    const parser = new CodexJsonl();
    try {
      for await (const line of runJsonLines(this.command, args, { cwd: task.workDir, signal: task.signal, label: "Codex" })) {
        yield* parser.events(line);
      }
    } catch (error) {
      // Codex exits non-zero after a failed turn; its own message says more than the exit code.
      if (parser.failure && !task.signal.aborted) throw new Error(`Codex failed: ${parser.failure}`);
      throw error;
    }
    if (parser.failure) throw new Error(`Codex failed: ${parser.failure}`);
    yield { type: "result", text: parser.finalMessage ?? "", isError: false };
  }

  async close(): Promise<void> {}
}
