#!/usr/bin/env node
// A FAKE `claude` CLI for the bridge's tests (the real one is not installed here). It behaves like
// `claude -p <prompt> --output-format stream-json --verbose --settings <file>` does for a task that
// wants two tools: it prints stream-json lines (system init, assistant tool_use, user tool_result,
// assistant text, result), and before each tool call runs the PreToolUse hook commands from the
// settings file through a shell with the hook's JSON on stdin, and respects the outcome as Claude
// Code documents it: exit 0 with `hookSpecificOutput.permissionDecision` allow/deny decides; exit 2
// blocks; any other failure is a non-blocking error, after which the normal permission check
// applies (headless: tools that need permission are refused, read-only tools like Read still run).
// What it saw and did is appended to fake-claude-log.jsonl next to this file.
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const LOG = path.join(path.dirname(fileURLToPath(import.meta.url)), "fake-claude-log.jsonl");
const MODEL = "claude-sonnet-4-5-20250929";
const ALL_TOOLS = [
  { name: "Bash", input: { command: "git status --short", description: "Show changed files" }, needsPermission: true },
  { name: "Read", input: { file_path: "/home/owner/.ssh/id_ed25519" }, needsPermission: false },
];

const args = process.argv.slice(2);
const flagValue = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
// `--tools ""` leaves the model no built-in tool to call (`--tools "Bash,Read"` names the ones
// kept). FAKE_CLAUDE_IGNORE_TOOLS=1 plays a CLI too old to know the flag's effect, so a test can
// show the hook still blocks everything.
const toolsFlag = process.env.FAKE_CLAUDE_IGNORE_TOOLS === "1" ? undefined : flagValue("--tools");
const TOOLS = toolsFlag === undefined ? ALL_TOOLS : ALL_TOOLS.filter((tool) => toolsFlag.split(",").includes(tool.name));
const prompt = flagValue("-p");
if (prompt === undefined || flagValue("--output-format") !== "stream-json") {
  process.stderr.write("fake claude: expected -p <prompt> --output-format stream-json\n");
  process.exit(1);
}
if (!args.includes("--verbose")) {
  process.stderr.write("Error: When using --print, --output-format=stream-json requires --verbose\n");
  process.exit(1);
}
const settings = flagValue("--settings") ? JSON.parse(readFileSync(flagValue("--settings"), "utf8")) : {};
const sessionId = randomUUID();
const print = (line) => process.stdout.write(`${JSON.stringify({ ...line, session_id: sessionId, uuid: randomUUID() })}\n`);

/** Runs the matching PreToolUse hooks the way Claude Code does; answers allow, deny or "none" (no decision). */
function preToolUse(tool, toolUseId) {
  const input = JSON.stringify({
    session_id: sessionId,
    transcript_path: "/tmp/fake-transcript.jsonl",
    cwd: process.cwd(),
    permission_mode: flagValue("--permission-mode") ?? "default",
    hook_event_name: "PreToolUse",
    tool_name: tool.name,
    tool_input: tool.input,
    tool_use_id: toolUseId,
  });
  for (const group of settings.hooks?.PreToolUse ?? []) {
    const matcher = group.matcher ?? "";
    if (!(matcher === "" || matcher === "*" || new RegExp(`^(${matcher})$`).test(tool.name))) continue;
    for (const hook of group.hooks ?? []) {
      if (hook.type !== "command") continue;
      const run = spawnSync("/bin/sh", ["-c", hook.command], { input, encoding: "utf8", timeout: (hook.timeout ?? 60) * 1000 });
      if (run.status === 2) return { decision: "deny", reason: run.stderr.trim(), exit: 2 };
      if (run.status !== 0) return { decision: "none", reason: `hook error (exit ${run.status})`, exit: run.status };
      try {
        const output = JSON.parse(run.stdout);
        const decision = output.hookSpecificOutput?.permissionDecision;
        if (decision === "allow" || decision === "deny") {
          return { decision, reason: output.hookSpecificOutput.permissionDecisionReason ?? "", exit: 0 };
        }
      } catch {
        // Plain output: no decision.
      }
    }
  }
  return { decision: "none", reason: "no hook decided", exit: null };
}

print({
  type: "system",
  subtype: "init",
  cwd: process.cwd(),
  tools: TOOLS.map((tool) => tool.name),
  mcp_servers: [],
  model: MODEL,
  permissionMode: flagValue("--permission-mode") ?? "default",
  apiKeySource: "none",
});

const outcomes = [];
for (const tool of TOOLS) {
  const toolUseId = `toolu_${randomUUID().replaceAll("-", "").slice(0, 24)}`;
  print({
    type: "assistant",
    message: {
      id: `msg_${randomUUID()}`,
      type: "message",
      role: "assistant",
      model: MODEL,
      content: [{ type: "tool_use", id: toolUseId, name: tool.name, input: tool.input }],
      stop_reason: null,
      usage: { input_tokens: 40, output_tokens: 12 },
    },
    parent_tool_use_id: null,
  });
  const hook = preToolUse(tool, toolUseId);
  // Without a hook decision, headless Claude refuses tools that need permission and runs the others.
  const ran = hook.decision === "allow" || (hook.decision === "none" && !tool.needsPermission);
  outcomes.push({ tool: tool.name, hook: hook.decision, exit: hook.exit, ran });
  print({
    type: "user",
    message: {
      role: "user",
      content: [
        ran
          ? { tool_use_id: toolUseId, type: "tool_result", content: `(output of ${tool.name})` }
          : { tool_use_id: toolUseId, type: "tool_result", content: hook.reason || "Permission denied", is_error: true },
      ],
    },
    parent_tool_use_id: null,
  });
}

const text = outcomes.map((o) => `${o.tool}: ${o.ran ? "ran" : "blocked"}`).join("; ") || "No tools here; answered in words.";
print({
  type: "assistant",
  message: { id: `msg_${randomUUID()}`, type: "message", role: "assistant", model: MODEL, content: [{ type: "text", text }] },
  parent_tool_use_id: null,
});
print({
  type: "result",
  subtype: "success",
  is_error: false,
  duration_ms: 1234,
  duration_api_ms: 1000,
  num_turns: TOOLS.length + 1,
  result: text,
  total_cost_usd: 0.0123,
  usage: { input_tokens: 120, cache_creation_input_tokens: 10, cache_read_input_tokens: 30, output_tokens: 45 },
  modelUsage: { [MODEL]: { inputTokens: 160, outputTokens: 45 } },
  permission_denials: outcomes.filter((o) => !o.ran).map((o) => ({ tool_name: o.tool })),
});
appendFileSync(LOG, `${JSON.stringify({ prompt, args, outcomes })}\n`);
