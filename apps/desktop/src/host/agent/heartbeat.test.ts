import { rm } from "node:fs/promises";
import { startTestServer, type TestServer, type TestUser } from "@tandem/server/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInAs, startTestHost, tempDir, waitFor } from "../../../test/host-harness";
import type { HeartbeatDelivery } from "../../shared/desktop-api";
import type { Host } from "../host";

/** Against a real server with its embedded local agent: the heartbeat through the host, and what main is told. */
describe("agent facet: the heartbeat", () => {
  let ts: TestServer;
  let ada: TestUser;
  let dataDir: string;
  let host: Host;
  const delivered: HeartbeatDelivery[] = [];

  beforeAll(async () => {
    ts = await startTestServer();
    ada = await ts.addUser("ada");
    await ada.client.call("createTodo", { body: { title: "Send the Atlas press kit", priority: 1 } });
    dataDir = await tempDir("tandem-desktop-heartbeat-");
    host = await startTestHost(dataDir);
    host.context.events.on("heartbeat-message", (delivery: HeartbeatDelivery) => delivered.push(delivery));
  });

  afterAll(async () => {
    await host?.close();
    await ts?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("asks to sign in first, then refuses malformed input by name", async () => {
    await expect(host.api.getHeartbeat()).rejects.toThrow("Sign in first");
    await signInAs(host, ts, ada);
    const api = host.api as unknown as Record<string, (input: unknown) => Promise<unknown>>;
    await expect(api.saveHeartbeatSettings?.({ tier: "SOMETIMES" })).rejects.toThrow("saveHeartbeatSettings: invalid input");
    await expect(api.saveHeartbeatSettings?.({ schedule: { everyMinutes: 1 } })).rejects.toThrow("saveHeartbeatSettings: invalid input");
    await expect(api.runHeartbeat?.({})).rejects.toThrow("runHeartbeat: invalid input");
    await expect(api.getHeartbeatRun?.({ runId: "1" })).rejects.toThrow("getHeartbeatRun: invalid input");
    await expect(api.setUnsavedWork?.({ description: 3 })).rejects.toThrow("setUnsavedWork: invalid input");
  });

  it("keeps the tier and the schedule, and says when the next run is due", async () => {
    const before = await host.api.getHeartbeat();
    expect(before.settings.tier).toBe("MESSAGES");
    expect(before.settings.schedule.enabled).toBe(false);
    expect(before.nextRunAt).toBeNull();

    const saved = await host.api.saveHeartbeatSettings({
      tier: "ACTIONS",
      schedule: { enabled: true, everyMinutes: 90, quietHours: { start: "22:00", end: "07:00" }, timezone: "Europe/Paris" },
    });
    expect(saved).toEqual({
      tier: "ACTIONS",
      schedule: { enabled: true, everyMinutes: 90, quietHours: { start: "22:00", end: "07:00" }, timezone: "Europe/Paris" },
    });
    const after = await host.api.getHeartbeat();
    expect(after.settings).toEqual(saved);
    expect(after.nextRunAt).not.toBeNull();
    // Fields left out keep their value.
    expect(await host.api.saveHeartbeatSettings({ schedule: { enabled: false } })).toMatchObject({
      tier: "ACTIONS",
      schedule: { enabled: false, everyMinutes: 90 },
    });
  });

  it("reads and saves the checklist; the server's refusal is said in its words", async () => {
    const first = await host.api.getHeartbeatChecklist();
    expect(first.isDefault).toBe(true);
    expect(first.content).toContain("Heartbeat checklist");
    const saved = await host.api.saveHeartbeatChecklist({ content: "- Todos: anything overdue?\n- Remind me to call the printer\n" });
    expect(saved.isDefault).toBe(false);
    expect(saved.content).toContain("Remind me to call the printer");
    expect((await host.api.getHeartbeatChecklist()).content).toContain("Remind me to call the printer");
    await expect(host.api.saveHeartbeatChecklist({ content: "x".repeat(10_001) })).rejects.toThrow("at most 10,000 characters");
  });

  it("runs: a dry run writes nothing and announces nothing; a run delivers, counts unread and tells main once", async () => {
    const dry = await host.api.runHeartbeat({ dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, delivered: false, status: "completed" });
    expect(dry.actions.map((action) => action.type)).toContain("list_todos");
    expect((await host.status()).agentUnread).toBe(0);
    expect(delivered).toEqual([]);

    const run = await host.api.runHeartbeat({ dryRun: false });
    expect(run).toMatchObject({ dryRun: false, delivered: true, status: "completed" });
    expect(run.text).toContain("Send the Atlas press kit");
    // The count and the announcement are there when the run answers.
    const status = await host.status();
    expect(status.agentUnread).toBe(1);
    expect(status.heartbeatDelivery).toMatchObject({ runId: run.runId, conversationId: run.conversationId });
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.preview).not.toBe("");

    // The run is listed first, and opens with its actions as text.
    const [listed] = await host.api.listHeartbeatRuns();
    expect(listed?.runId).toBe(run.runId);
    const detail = await host.api.getHeartbeatRun({ runId: run.runId });
    expect(detail.actions.length).toBeGreaterThan(0);
    for (const action of detail.actions) {
      expect(typeof action.payload).toBe("string");
      expect(typeof action.result).toBe("string");
    }
    await expect(host.api.getHeartbeatRun({ runId: 999_999 })).rejects.toThrow(/not found/i);

    // The thread is marked as the heartbeat's, with its unread message; reading it clears the count.
    const thread = (await host.api.listConversations()).find((conversation) => conversation.conversationId === run.conversationId);
    expect(thread).toMatchObject({ heartbeat: true, unreadCount: 1 });
    await host.api.markConversationRead({ conversationId: run.conversationId ?? -1 });
    expect((await host.status()).agentUnread).toBe(0);
    expect((await host.api.listConversations())[0]?.unreadCount).toBe(0);
  });

  it("announces nothing of another account's runs, and nothing delivered before it signed in", async () => {
    const bob = await ts.addUser("bob");
    await bob.client.call("runHeartbeat", { body: {} });
    await signInAs(host, ts, bob);
    await waitFor("bob's unread count", async () => (await host.status()).agentUnread === 1);
    const status = await host.status();
    expect(status.heartbeatDelivery).toBeNull();
    expect(delivered).toHaveLength(1);
  });

  it("says what a key without the heartbeat's scopes lacks", async () => {
    const carol = await ts.addUser("carol", ["os.notes:read", "os.notes:write", "os.todos:read", "os.todos:write"]);
    await signInAs(host, ts, carol);
    await expect(host.api.getHeartbeat()).rejects.toThrow("Your API key cannot do this (it lacks os.heartbeat:read)");
    await expect(host.api.runHeartbeat({ dryRun: true })).rejects.toThrow("os.heartbeat:run");
    // Its unread messages are still counted (none), without an error.
    expect((await host.status()).agentUnread).toBe(0);
  });

  it("says the server is out of reach in words", async () => {
    await ts.server.close();
    await expect(host.api.getHeartbeat()).rejects.toThrow("Can't reach the server right now");
    await ts.restart();
  });
});
