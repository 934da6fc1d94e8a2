#!/usr/bin/env node
// A FAKE `codex` CLI for the bridge's tests (the real one is not installed here): for
// `codex exec --json ... <prompt>` it prints the JSONL events Codex prints (thread, turn, items,
// usage) and logs its arguments to fake-codex-log.jsonl next to this file. A prompt containing
// "FAIL" ends with a failed turn, as Codex does when the model call fails.
import { appendFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
appendFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "fake-codex-log.jsonl"), `${JSON.stringify({ args })}\n`);
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const prompt = args.at(-1) ?? "";
if (args[0] !== "exec" || !args.includes("--json")) {
  process.stderr.write("fake codex: expected exec --json\n");
  process.exit(2);
}
print({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
print({ type: "turn.started" });
if (prompt.includes("FAIL")) {
  print({ type: "turn.failed", error: { message: "stream disconnected before completion" } });
  process.exit(1);
}
print({ type: "item.completed", item: { id: "item_0", type: "reasoning", text: "**Reading the repository**" } });
print({
  type: "item.started",
  item: { id: "item_1", type: "command_execution", command: "bash -lc ls", aggregated_output: "", exit_code: null, status: "in_progress" },
});
print({
  type: "item.completed",
  item: {
    id: "item_1",
    type: "command_execution",
    command: "bash -lc ls",
    aggregated_output: "README.md\n",
    exit_code: 0,
    status: "completed",
  },
});
print({ type: "item.completed", item: { id: "item_2", type: "agent_message", text: "The repository has a README." } });
print({ type: "turn.completed", usage: { input_tokens: 2400, cached_input_tokens: 1200, output_tokens: 90 } });
