import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CODEX_RUN_TOOL, CodexRuntime } from "../src/host/bridge/runtime/codex-runtime";
import type { RuntimeEvent, ToolDecision, ToolRequest } from "../src/host/bridge/runtime/runtime-adapter";
import { installFakeCli } from "./bridge-fixture";

const FAKE_CODEX = fileURLToPath(new URL("./bridge-fake-codex.mjs", import.meta.url));

/** The Codex adapter against a FAKE `codex` executable that prints Codex's JSONL events. */
describe("Codex adapter with a fake codex CLI", () => {
  let dir: string;
  let codex: string;

  beforeAll(async () => {
    ({ dir, command: codex } = await installFakeCli("codex", FAKE_CODEX));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(prompt: string, decision: ToolDecision) {
    const asked: ToolRequest[] = [];
    const events: RuntimeEvent[] = [];
    const task = {
      id: "msg_codex",
      prompt,
      requestText: "What is in the repository?",
      workDir: path.join(dir, "work"),
      requestTool: async (request: ToolRequest) => {
        asked.push(request);
        return decision;
      },
      signal: new AbortController().signal,
    };
    for await (const event of new CodexRuntime(codex).run(task)) events.push(event);
    return { asked, events };
  }

  const invocations = async () =>
    (await readFile(path.join(dir, "fake-codex-log.jsonl"), "utf8").catch(() => ""))
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { args: string[] });

  it("asks the owner once before running; denied, Codex never starts", async () => {
    const { asked, events } = await run("wrapped prompt", "deny");
    expect(asked).toEqual([{ toolName: CODEX_RUN_TOOL, toolInputSummary: expect.stringContaining("What is in the repository?") }]);
    expect(events).toEqual([
      { type: "tool", toolName: CODEX_RUN_TOOL, decision: "deny" },
      { type: "result", text: "The owner did not allow Codex to work on this request.", isError: false },
    ]);
    expect(await invocations()).toEqual([]);
  });

  it("allowed, runs `codex exec --json` in the read-only sandbox and answers its last message", async () => {
    const { events } = await run("wrapped prompt", "allow");
    expect((await invocations()).at(-1)?.args).toEqual([
      "exec",
      "--json",
      "--sandbox",
      "read-only",
      "--skip-git-repo-check",
      "-c",
      'approval_policy="never"',
      "wrapped prompt",
    ]);
    expect(events.slice(1)).toEqual([
      { type: "text", text: "The repository has a README." },
      { type: "usage", usage: { model: null, inputTokens: 2400, outputTokens: 90 } },
      { type: "result", text: "The repository has a README.", isError: false },
    ]);
  });

  it("throws when the turn fails", async () => {
    await expect(run("FAIL please", "allow")).rejects.toThrow("Codex failed: stream disconnected before completion");
  });
});
