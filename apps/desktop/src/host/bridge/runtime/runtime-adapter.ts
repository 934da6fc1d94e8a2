import type { BridgeRuntime } from "../../../shared/desktop-api";

export type ToolDecision = "allow" | "deny";

export interface ToolRequest {
  readonly toolName: string;
  /** What the tool would do, ≤ 500 characters; shown to the owner as plain text. */
  readonly toolInputSummary: string;
}

export interface RuntimeUsage {
  readonly model: string | null;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
}

/** One task for a runtime: a peer's request, already wrapped as untrusted content. */
export interface RuntimeTask {
  /** The message id; names temp files and logs. */
  readonly id: string;
  readonly prompt: string;
  /** The peer's request alone (untrusted), for approval summaries that must say what is asked. */
  readonly requestText: string;
  /** Where the runtime works (created by the bridge). */
  readonly workDir: string;
  /**
   * Asks whether a tool call may run: the owner's policy or decision, through the server. Never
   * throws; anything but an explicit allow (errors, timeouts, a closed bridge) answers deny.
   */
  requestTool(request: ToolRequest): Promise<ToolDecision>;
  /** Aborted when the bridge stops: the runtime must end at once. */
  readonly signal: AbortSignal;
  /**
   * The run must have no tools at all (a guest's message). `requestTool` then refuses every call;
   * an adapter that can also withhold the tools from the start does so (Claude Code: `--tools ""`).
   */
  readonly noTools?: boolean;
}

/** What a runtime reports while it works; `result` comes last, exactly once, unless the run throws. */
export type RuntimeEvent =
  | { readonly type: "tool"; readonly toolName: string; readonly decision: ToolDecision }
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "usage"; readonly usage: RuntimeUsage }
  | { readonly type: "result"; readonly text: string; readonly isError: boolean };

/** One interface over Claude Code, Codex and the scripted fake. */
export interface RuntimeAdapter {
  readonly runtime: BridgeRuntime;
  /**
   * Whether a run can be held to no tools at all (every call refused): what answering guests
   * needs. Claude Code can (its hook blocks every call); Codex cannot (its sandbox runs commands
   * without asking).
   */
  readonly runsWithoutTools: boolean;
  /** Runs a task; throws when the runtime could not run at all (missing CLI, crash). */
  run(task: RuntimeTask): AsyncIterable<RuntimeEvent>;
  /** Frees what the adapter holds (the hook endpoint). */
  close(): Promise<void>;
}
