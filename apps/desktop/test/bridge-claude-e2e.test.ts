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
});
