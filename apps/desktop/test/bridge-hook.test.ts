import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HookFiles, writeHookFiles } from "../src/host/bridge/hook/hook-files";
import { startHookServer } from "../src/host/bridge/hook/hook-server";

/** Claude Code's PreToolUse input, as the CLI sends it on the hook's stdin. */
const HOOK_INPUT = {
  session_id: "0d6e8a2c-4a39-4c55-9d1f-6b1f1c1b2a3d",
  transcript_path: "/tmp/transcript.jsonl",
  cwd: "/work",
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "rm -rf build", description: "Clean" },
  tool_use_id: "toolu_01",
};

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the hook script as Claude's hook command does: `node <script> <config>`, the call on stdin. */
function runHook(scriptPath: string, configPath: string, input: string = JSON.stringify(HOOK_INPUT)): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [scriptPath, configPath], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

function decisionOf(run: HookRun): string | undefined {
  return run.code === 0 ? JSON.parse(run.stdout).hookSpecificOutput?.permissionDecision : undefined;
}

describe("the PreToolUse hook script against a fake loopback", () => {
  let dir: string;
  let script: HookFiles;
  let server: Server;
  let url: string;
  /** What the fake desktop does with the next request. */
  let behaviour: (request: IncomingMessage, response: ServerResponse, body: string) => void;
  const received: { authorization: string | undefined; body: unknown }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tandem-hook-test-"));
    script = await writeHookFiles({ url: "http://127.0.0.1:9/unused", token: "unused" });
    server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        received.push({ authorization: request.headers.authorization, body: JSON.parse(body) });
        behaviour(request, response, body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pre-tool-use`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
    await script.remove();
  });

  const hook = (configPath: string, input?: string) => runHook(script.scriptPath, configPath, input);

  async function config(fields: Record<string, unknown>): Promise<string> {
    const file = path.join(dir, `config-${received.length}-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, JSON.stringify({ url, token: "task-token", timeoutMs: 5_000, ...fields }));
    return file;
  }

  const answer = (status: number, body: unknown) => (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };

  it("forwards the hook input with the task's token and prints allow", async () => {
    behaviour = answer(200, { decision: "allow" });
    const run = await hook(await config({}));
    expect(run.code).toBe(0);
    expect(decisionOf(run)).toBe("allow");
    expect(JSON.parse(run.stdout).hookSpecificOutput.hookEventName).toBe("PreToolUse");
    expect(received.at(-1)).toEqual({ authorization: "Bearer task-token", body: HOOK_INPUT });
  });

  it("prints deny with the desktop's reason", async () => {
    behaviour = answer(200, { decision: "deny", reason: "The owner denied it" });
    const run = await hook(await config({}));
    expect(decisionOf(run)).toBe("deny");
    expect(JSON.parse(run.stdout).hookSpecificOutput.permissionDecisionReason).toBe("The owner denied it");
  });

  it("blocks (exit 2) when the desktop does not answer in time", async () => {
    behaviour = () => {}; // Never answers.
    const run = await hook(await config({ timeoutMs: 600 }));
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Tandem blocked this tool call");
  });

  it("blocks on a refusal, an unknown answer, an unreachable desktop or a broken configuration", async () => {
    behaviour = answer(403, { decision: "deny", reason: "unknown task" });
    expect((await hook(await config({}))).code).toBe(2);

    behaviour = answer(200, { decision: "maybe" });
    expect((await hook(await config({}))).code).toBe(2);

    behaviour = answer(200, { decision: "allow" });
    expect((await hook(await config({ url: "http://127.0.0.1:9/pre-tool-use" }))).code).toBe(2);
    expect((await hook(path.join(dir, "missing.json"))).code).toBe(2);
    expect((await hook(await config({ token: 42 }))).code).toBe(2);
    // Malformed hook input is never forwarded.
    const before = received.length;
    expect((await hook(await config({}), "not json")).code).toBe(2);
    expect(received.length).toBe(before);
  });
});

describe("the hook script against the bridge's hook server", () => {
  it("reaches the registered task, and refuses unknown tokens", async () => {
    const hookServer = await startHookServer();
    const seen: unknown[] = [];
    const { token, unregister } = hookServer.register(async (input) => {
      seen.push(input);
      return { decision: input.tool_name === "Read" ? "allow" : "deny" };
    });
    const files = await writeHookFiles({ url: hookServer.url, token });
    const stranger = await writeHookFiles({ url: hookServer.url, token: "not-a-task" });
    try {
      // The per-task files are private to this user, and the settings run this very script for every tool.
      for (const file of [files.scriptPath, files.configPath, files.settingsPath, path.dirname(files.configPath)]) {
        expect((await stat(file)).mode & 0o077).toBe(0);
      }
      const settings = JSON.parse(await readFile(files.settingsPath, "utf8"));
      expect(settings.hooks.PreToolUse).toEqual([
        { matcher: "*", hooks: [{ type: "command", command: expect.stringContaining(files.scriptPath), timeout: 360 }] },
      ]);
      const { scriptPath, configPath } = files;

      expect(decisionOf(await runHook(scriptPath, configPath))).toBe("deny");
      const read = JSON.stringify({ ...HOOK_INPUT, tool_name: "Read", tool_input: { file_path: "/a" } });
      expect(decisionOf(await runHook(scriptPath, configPath, read))).toBe("allow");
      expect(seen).toHaveLength(2);
      expect((await runHook(stranger.scriptPath, stranger.configPath)).code).toBe(2);
      unregister();
      expect((await runHook(scriptPath, configPath)).code).toBe(2);
      expect(seen).toHaveLength(2);
    } finally {
      await files.remove();
      await stranger.remove();
      await hookServer.close();
    }
  });
});
