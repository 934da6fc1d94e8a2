import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaudeCodeRuntime } from "../src/host/bridge/runtime/claude-code-runtime";
import type { RuntimeEvent, RuntimeTask, ToolDecision, ToolRequest } from "../src/host/bridge/runtime/runtime-adapter";
import { installFakeCli } from "./bridge-fixture";

const FAKE_CLAUDE = fileURLToPath(new URL("./bridge-fake-claude.mjs", import.meta.url));

/**
 * The Claude Code adapter against a FAKE `claude` executable (the real CLI is not installed here):
 * the fake prints realistic stream-json and runs the PreToolUse hook command it was given through a
 * shell, as the CLI does, so this exercises the adapter, the settings file, the hook script and the
 * loopback hook server together.
 */
describe("Claude Code adapter with a fake claude CLI", () => {
  let dir: string;
  let claude: string;
  let workDir: string;

  beforeAll(async () => {
    ({ dir, command: claude, workDir } = await installFakeCli("claude", FAKE_CLAUDE));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function lastLog(): Promise<{
    prompt: string;
    args: string[];
    outcomes: { tool: string; hook: string; exit: number | null; ran: boolean }[];
  }> {
    const lines = (await readFile(path.join(dir, "fake-claude-log.jsonl"), "utf8")).trim().split("\n");
    return JSON.parse(lines.at(-1) as string);
  }

  async function run(
    adapter: ClaudeCodeRuntime,
    decide: (request: ToolRequest) => Promise<ToolDecision>,
    signal = new AbortController().signal,
    noTools = false,
  ) {
    const asked: ToolRequest[] = [];
    const task: RuntimeTask = {
      id: "msg_test",
      prompt: "The following is a request from someone. <<<UNTRUSTED_CONTENT x BEGIN>>>\nlist changes\n<<<UNTRUSTED_CONTENT x END>>>",
      requestText: "list changes",
      workDir,
      requestTool: (request) => {
        asked.push(request);
        return decide(request);
      },
      signal,
      noTools,
    };
    const events: RuntimeEvent[] = [];
    for await (const event of adapter.run(task)) events.push(event);
    return { events, asked };
  }

  it("gates every tool call through the hook and reports text, usage and the result", async () => {
    const adapter = new ClaudeCodeRuntime(claude);
    try {
      const { events, asked } = await run(adapter, async (request) => (request.toolName === "Bash" ? "allow" : "deny"));
      expect(asked).toEqual([
        { toolName: "Bash", toolInputSummary: "command: git status --short\ndescription: Show changed files" },
        { toolName: "Read", toolInputSummary: "file_path: /home/owner/.ssh/id_ed25519" },
      ]);
      const log = await lastLog();
      // The CLI got the prompt as one argument, stream-json with --verbose, our settings, default permissions.
      expect(log.prompt).toContain("list changes");
      expect(log.args).toEqual(
        expect.arrayContaining(["--output-format", "stream-json", "--verbose", "--settings", "--permission-mode", "default"]),
      );
      expect(log.outcomes).toEqual([
        { tool: "Bash", hook: "allow", exit: 0, ran: true },
        { tool: "Read", hook: "deny", exit: 0, ran: false },
      ]);
      expect(events).toEqual([
        { type: "tool", toolName: "Bash", decision: "allow" },
        { type: "tool", toolName: "Read", decision: "deny" },
        { type: "text", text: "Bash: ran; Read: blocked" },
        { type: "usage", usage: { model: "claude-sonnet-4-5-20250929", inputTokens: 160, outputTokens: 45 } },
        { type: "result", text: "Bash: ran; Read: blocked", isError: false },
      ]);
    } finally {
      await adapter.close();
    }
  });

  it("fails closed: when the desktop cannot decide, even a read-only tool is blocked", async () => {
    const adapter = new ClaudeCodeRuntime(claude);
    try {
      const { events } = await run(adapter, async () => {
        throw new Error("the approval service is down");
      });
      // Without a decision, headless Claude would still run Read; the hook's exit 2 stops it.
      expect((await lastLog()).outcomes).toEqual([
        { tool: "Bash", hook: "deny", exit: 2, ran: false },
        { tool: "Read", hook: "deny", exit: 2, ran: false },
      ]);
      expect(events.at(-1)).toEqual({ type: "result", text: "Bash: blocked; Read: blocked", isError: false });
    } finally {
      await adapter.close();
    }
  });

  it("runs a no-tools task (a guest's) without built-in or MCP tools, and the hook still blocks a CLI that ignores that", async () => {
    const adapter = new ClaudeCodeRuntime(claude);
    const refuseAll = async () => "deny" as const;
    try {
      const { events, asked } = await run(adapter, refuseAll, undefined, true);
      const log = await lastLog();
      expect(log.args.slice(log.args.indexOf("--tools"))).toEqual(["--tools", "", "--strict-mcp-config"]);
      expect([asked, log.outcomes]).toEqual([[], []]);
      expect(events.at(-1)).toEqual({ type: "result", text: "No tools here; answered in words.", isError: false });

      process.env.FAKE_CLAUDE_IGNORE_TOOLS = "1";
      const ignoring = await run(adapter, refuseAll, undefined, true);
      expect(ignoring.asked.map((request) => request.toolName)).toEqual(["Bash", "Read"]);
      expect((await lastLog()).outcomes.map((o) => o.ran)).toEqual([false, false]);
    } finally {
      delete process.env.FAKE_CLAUDE_IGNORE_TOOLS;
      await adapter.close();
    }
  });

  it("says so when the CLI is missing", async () => {
    const adapter = new ClaudeCodeRuntime(path.join(dir, "no-such-claude"));
    try {
      await expect(run(adapter, async () => "allow")).rejects.toThrow(/Claude Code is not installed/);
    } finally {
      await adapter.close();
    }
  });
});
