import type { FakeRuntimeRecord, FakeToolCall } from "../../host-context";
import type { RuntimeAdapter, RuntimeEvent, RuntimeTask, ToolDecision } from "./runtime-adapter";

/**
 * A scripted runtime for tests: it asks for each tool call of its script in order, through the same
 * approval path a real runtime's hook uses, records what it received and decided, then answers
 * which tools were allowed and which denied.
 */
export class FakeRuntime implements RuntimeAdapter {
  readonly runtime = "fake" as const;
  readonly runsWithoutTools = true;

  constructor(
    private readonly toolCalls: readonly FakeToolCall[],
    private readonly record: (record: FakeRuntimeRecord) => unknown = () => {},
  ) {}

  async *run(task: RuntimeTask): AsyncIterable<RuntimeEvent> {
    // A test may hold the run here (revoking a link meanwhile, say) by answering a promise.
    await this.record({ kind: "started", messageId: task.id, prompt: task.prompt });
    const decisions: { toolName: string; decision: ToolDecision }[] = [];
    for (const call of this.toolCalls) {
      if (task.signal.aborted) throw new Error("The fake runtime was stopped");
      const decision = await task.requestTool(call);
      decisions.push({ toolName: call.toolName, decision });
      this.record({ kind: "decision", messageId: task.id, toolName: call.toolName, decision });
      yield { type: "tool", toolName: call.toolName, decision };
    }
    const list = (wanted: ToolDecision) =>
      decisions
        .filter((d) => d.decision === wanted)
        .map((d) => d.toolName)
        .join(", ") || "none";
    const text = `Fake runtime finished. Allowed: ${list("allow")}. Denied: ${list("deny")}.`;
    yield { type: "usage", usage: { model: "fake", inputTokens: task.prompt.length, outputTokens: text.length } };
    this.record({ kind: "finished", messageId: task.id, result: text });
    yield { type: "result", text, isError: false };
  }

  async close(): Promise<void> {}
}
