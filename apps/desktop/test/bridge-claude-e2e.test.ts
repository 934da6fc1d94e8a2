import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Host } from "../src/host/host";
import {
  grantAgentAccess,
  installFakeCli,
  ownerDecides,
  type PeerBridge,
  pairBridge,
  registerPeerBridge,
  replyText,
  requestGrant,
  sendTask,
  waitReplied,
  wire,
} from "./bridge-fixture";
import { signInAs, startTestHost, tempDir } from "./host-harness";

const FAKE_CLAUDE = fileURLToPath(new URL("./bridge-fake-claude.mjs", import.meta.url));

/**
 * The whole path with the claude-code adapter: a real server, bob's desktop paired as
 * `claude-code`, a FAKE `claude` CLI (fakes only at the CLI edge) whose PreToolUse hook asks the
 * desktop, which asks the server, which waits for bob's decision made through the host's API.
 */
describe("a grant served by the claude-code adapter", () => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let aliceBridge: PeerBridge;
  let claude: { dir: string; command: string };
  let dataDir: string;
  let host: Host;

  beforeAll(async () => {
    ts = await startTestServer();
    alice = await ts.addUser("alice");
    bob = await ts.addUser("bob");
    await grantAgentAccess(ts, alice, bob);
    aliceBridge = await registerPeerBridge(ts, alice, "alice-laptop");
    expect((await ts.cli(["credits", "set", "alice", "1"])).code).toBe(0);
    claude = await installFakeCli("claude", FAKE_CLAUDE);
    dataDir = await tempDir("tandem-bridge-claude-");
    host = await startTestHost(dataDir, { bridge: { claudeCommand: claude.command } });
    await signInAs(host, ts, bob);
  });

  afterAll(async () => {
    await host?.close();
    await ts?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (claude) await rm(claude.dir, { recursive: true, force: true });
  });

  it("runs alice's task in Claude Code, each tool call decided by bob", async () => {
    await pairBridge(ts, host.api, bob, "claude-code");
    expect((await host.api.getBridgeStatus()).runtime).toBe("claude-code");
    const grantId = await requestGrant(ts, aliceBridge, bob);
    await host.api.acceptGrant({ grantId });
    const { messageId } = await sendTask(ts, aliceBridge, grantId, "task-1", "Which files changed?");

    const bash = await ownerDecides(host.api, "Bash", "allow");
    expect(bash.toolInputSummary).toBe("command: git status --short\ndescription: Show changed files");
    const read = await ownerDecides(host.api, "Read", "deny");
    expect(read.toolInputSummary).toBe("file_path: /home/owner/.ssh/id_ed25519");

    await waitReplied(ts, alice, messageId);
    expect(await replyText(ts, aliceBridge, messageId)).toBe("Bash: ran; Read: blocked");
    const log = JSON.parse((await readFile(path.join(claude.dir, "fake-claude-log.jsonl"), "utf8")).trim());
    expect(log.outcomes).toEqual([
      { tool: "Bash", hook: "allow", exit: 0, ran: true },
      { tool: "Read", hook: "deny", exit: 0, ran: false },
    ]);
    expect(log.prompt).toMatch(/^The following is a request from @alice/);
    expect(log.prompt).toMatch(/BEGIN>>>\nWhich files changed\?\n<<<UNTRUSTED_CONTENT [0-9a-f]+ END>>>/);
  });

  it("answers a guest of bob's share link from Claude Code with no tools, even when the CLI ignores --tools", async () => {
    await host.api.setBridgeGuestAnswering({ enabled: true });
    const { shareLink } = await wire<{ shareLink: { token: string } }>(ts, bob.apiKey, "POST", "/os/share", {
      localAgent: true,
      requireSignIn: false,
      label: "Ask Bob",
    });
    const ask = async (message: string) => {
      const response = await ts.fetch("/api/chat/guest-v04", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ token: shareLink.token, message }),
      });
      return (await response.json()) as { answeredBy: string; response: string };
    };
    const lastLog = async () =>
      JSON.parse((await readFile(path.join(claude.dir, "fake-claude-log.jsonl"), "utf8")).trim().split("\n").at(-1) as string);
    const approvalsBefore = (await wire<{ approvals: unknown[] }>(ts, bob.apiKey, "GET", "/local-agent/tool-approvals")).approvals;

    // Started without tools: the model has none to call.
    expect(await ask("Which files changed?")).toMatchObject({ answeredBy: "local", response: "No tools here; answered in words." });
    const log = await lastLog();
    expect(log.args.slice(log.args.indexOf("--tools"))).toEqual(["--tools", "", "--strict-mcp-config"]);
    expect(log.prompt).toMatch(/^The following is a message from a guest on the share link "Ask Bob"/);

    // A CLI that ignored the flags still gets nothing: the hook refuses both calls, and bob is never asked.
    process.env.FAKE_CLAUDE_IGNORE_TOOLS = "1";
    try {
      expect(await ask("Run git status, please.")).toMatchObject({ answeredBy: "local", response: "Bash: blocked; Read: blocked" });
    } finally {
      delete process.env.FAKE_CLAUDE_IGNORE_TOOLS;
    }
    expect((await lastLog()).outcomes).toEqual([
      { tool: "Bash", hook: "deny", exit: 0, ran: false },
      { tool: "Read", hook: "deny", exit: 0, ran: false },
    ]);
    expect((await wire<{ approvals: unknown[] }>(ts, bob.apiKey, "GET", "/local-agent/tool-approvals")).approvals).toEqual(approvalsBefore);
    const [latest] = await host.api.listBridgeActivity();
    expect(latest).toMatchObject({
      source: "guest",
      outcome: "answered",
      toolCalls: [
        { toolName: "Bash", status: "denied" },
        { toolName: "Read", status: "denied" },
      ],
    });
  });
});
