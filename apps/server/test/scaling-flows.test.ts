import { jsonToText, noteDocName, readNoteBody, readTodos, TandemClient, todosDocName } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type * as Y from "yjs";
import type { RunningServer } from "../src/server";
import { agentPair, type Bridge, call, ok, openGrant, StreamReader, type WireReceipt } from "./delegation-fixture";
import { POSTGRES_URL, REDIS_URL, randomRedisPrefix, startAnotherInstance, startTestServer, type TestServer } from "./harness";
import { type RoundRobinProxy, startRoundRobinProxy } from "./round-robin-proxy";
import { appendParagraph, openDoc, type SyncedDoc, until } from "./sync-client";

/**
 * The full flows (issue 24, "Proven the way it will be run"): three instances on one PostgreSQL
 * schema and one Redis behind a round-robin proxy, and every request and connection through its
 * one URL, so consecutive calls of one flow land on different instances.
 */

const bodyText = (doc: Y.Doc) => jsonToText(readNoteBody(doc));

describe.skipIf(!POSTGRES_URL)("the full flows through one URL over three instances (PostgreSQL + Redis)", () => {
  let one: TestServer;
  let others: RunningServer[];
  let proxy: RoundRobinProxy;
  /** The fixtures' view of "the server": every request goes through the proxy; users are added in storage. */
  let via: TestServer;
  let serial = 0;

  beforeAll(async () => {
    one = await startTestServer({ redisUrl: REDIS_URL, redisPrefix: randomRedisPrefix(), maintenanceIntervalMs: 0 }, "postgres");
    others = [await startAnotherInstance(one), await startAnotherInstance(one)];
    proxy = await startRoundRobinProxy([one.server.url, ...others.map((other) => other.url)]);
    via = {
      addUser: (username: string) => one.addUser(username),
      fetch: (pathAndQuery: string, init?: RequestInit) => fetch(`${proxy.url}${pathAndQuery}`, init),
      get server() {
        return one.server;
      },
    } as TestServer;
  });
  afterAll(async () => {
    await proxy?.close();
    for (const other of others ?? []) await other.close();
    await one?.stop();
  });

  /** A user, and their typed client through the proxy. */
  async function user(name: string) {
    const added = await one.addUser(`${name}${++serial}`);
    return { ...added, client: new TandemClient({ baseUrl: `${proxy.url}/api/v1`, token: added.apiKey, validateResponses: true }) };
  }
  const syncUrl = () => `${proxy.url.replace("http", "ws")}/sync`;
  const instances = () => [one.server, ...others];
  const connectionsPer = () => instances().map((instance) => instance.context.sync.hocuspocus.getConnectionsCount());

  it("notes: created over REST, edited over sync by two clients on different instances and by a REST PATCH, read back alike everywhere", async () => {
    const alice = await user("alice");
    const { note } = (await alice.client.call("createNote", { body: { title: "Behind one URL", content: "<p>created</p>" } })).result;
    const editors: SyncedDoc[] = [];
    try {
      const before = connectionsPer();
      for (let i = 0; i < 2; i++) editors.push(await openDoc(syncUrl(), alice.apiKey, noteDocName(note.uuid)));
      const [first, second] = editors as [SyncedDoc, SyncedDoc];
      expect([first.outcome, second.outcome]).toEqual(["synced", "synced"]);
      // Two upgrades in a row go to two different instances.
      expect(connectionsPer().filter((count, i) => count > (before[i] ?? 0))).toHaveLength(2);
      expect(bodyText(first.doc)).toContain("created");

      appendParagraph(first.doc, "typed by the first");
      appendParagraph(second.doc, "typed by the second");
      for (const editor of editors) {
        await until(
          editor.doc,
          () => ["typed by the first", "typed by the second"].every((t) => bodyText(editor.doc).includes(t)),
          "both edits",
        );
      }
      await alice.client.call("updateNote", { params: { id: note.id }, body: { content: "<p>patched over REST</p>" } });
      for (const editor of editors) await until(editor.doc, () => bodyText(editor.doc).includes("patched over REST"), "the PATCH");
      appendParagraph(second.doc, "typed after the PATCH");
      await until(first.doc, () => bodyText(first.doc).includes("typed after the PATCH"), "the edit after the PATCH");
    } finally {
      for (const editor of editors) editor.close();
    }
    // Read back three times, so from each instance: the same note, stored.
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push((await alice.client.call("getNote", { params: { id: note.id } })).note.markdown);
    expect(reads[0]).toContain("patched over REST");
    expect(reads[0]).toContain("typed after the PATCH");
    expect(new Set(reads).size).toBe(1);
  });

  it("todos: created, changed and completed over REST on different instances, live in an editor, listed alike everywhere", async () => {
    const bob = await user("bob");
    const editor = await openDoc(syncUrl(), bob.apiKey, todosDocName(bob.userId));
    try {
      const created = (await bob.client.call("createTodo", { body: { title: "Ship it" } })).result.todo;
      await bob.client.call("updateTodo", { params: { id: created.id }, body: { title: "Ship it today" } });
      await bob.client.call("completeTodo", { params: { id: created.id }, body: {} });
      await until(
        editor.doc,
        () => [...readTodos(editor.doc).values()].some((todo) => todo.title === "Ship it today" && todo.completed === true),
        "the todo, renamed and completed",
      );
    } finally {
      editor.close();
    }
    const lists = [];
    for (let i = 0; i < 3; i++) {
      lists.push((await bob.client.call("listTodos", { query: {} })).result.todos.map((t) => [t.title, t.completed]));
    }
    expect(lists[0]).toEqual([["Ship it today", true]]);
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
  });

  it("delegation: a bridge paired by device code, a grant, a delivery over /local-realtime/stream and its tool approval", async () => {
    const pair = await agentPair(via, { alice: `ann${++serial}`, bob: `ben${serial}` });
    // Bob's second bridge pairs by device code: start, approve and poll each land on another instance.
    const started = await ok<{ userCode: string; pollToken: string }>(via, "anonymous", "POST", "/local-agent/device-code/start", {
      deviceId: `ben${serial}-desktop`,
      runtime: "claude-code",
      bridgeVersion: "1.0.0",
      capabilities: ["task_invite", "text"],
    });
    await ok(via, pair.bob.apiKey, "POST", "/local-agent/device-code/approve", { userCode: started.userCode, action: "approve" });
    const paired = await ok<{ status: string; deviceToken: string; endpointId: string }>(
      via,
      "anonymous",
      "POST",
      "/local-agent/device-code/poll",
      {
        pollToken: started.pollToken,
      },
    );
    expect(paired.status).toBe("approved");
    const session = await ok<{ sessionHandle: string }>(via, paired.deviceToken, "POST", "/local-agent/sessions", {
      endpointId: paired.endpointId,
      label: "desktop session",
      state: "idle",
      deliveryMode: "managed_stream",
      capabilities: ["task_invite", "text"],
      allowInbound: true,
      allowMidTurnSteer: false,
    });
    await ok(via, paired.deviceToken, "PUT", "/local-agent/default-route", {
      endpointId: paired.endpointId,
      sessionHandle: session.sessionHandle,
    });
    const bobDesktop: Bridge = { ...pair.bobBridge, deviceId: `ben${serial}-desktop`, ...paired, sessionHandle: session.sessionHandle };

    // The stream is held on one instance; the grant and the message go through the others.
    const stream = StreamReader.open(via, bobDesktop);
    try {
      const grant = await openGrant(via, pair.aliceBridge.deviceToken, pair.bob);
      expect(grant.frozenEndpointId).toBe(bobDesktop.endpointId);
      const sent = await ok<WireReceipt>(via, pair.aliceBridge.deviceToken, "POST", "/local-agent/messages", {
        communicationSessionId: grant.communicationSessionId,
        clientMessageId: "through-the-proxy",
        kind: "text",
        payload: { text: "hello from behind one URL" },
      });
      const dispatch = await stream.next("message.dispatch");
      expect(dispatch.data).toMatchObject({ deliveryId: sent.deliveryId, envelope: { payload: { text: "hello from behind one URL" } } });
      await expect
        .poll(
          async () =>
            (await ok<{ delivery: { status: string } }>(via, pair.alice.apiKey, "GET", `/local-agent/messages/${sent.messageId}`)).delivery
              .status,
        )
        .toBe("dispatched");
      await ok(via, bobDesktop.deviceToken, "POST", `/local-agent/messages/${sent.messageId}/ack`, {
        phase: "device_ack",
        attemptId: "a1",
      });

      // Bob's runtime asks to use a tool; bob allows it through another instance; the decision reaches the stream.
      const approval = await ok<{ approvalId: string; status: string }>(
        via,
        bobDesktop.deviceToken,
        "POST",
        "/local-agent/tool-approvals",
        {
          communicationSessionId: grant.communicationSessionId,
          sessionHandle: bobDesktop.sessionHandle,
          toolName: "Bash",
          toolInputSummary: "npm test",
        },
      );
      expect(approval.status).toBe("pending");
      const cursor = Number(stream.lastCursor);
      await ok(via, pair.bob.apiKey, "POST", `/local-agent/tool-approvals/${approval.approvalId}/resolve`, {
        decision: "allow",
        scope: "once",
      });
      const decision = await stream.next("tool.approval_decision", cursor);
      expect(decision.data).toMatchObject({ approvalId: approval.approvalId, decision: "allow" });
      expect(await ok(via, bobDesktop.deviceToken, "GET", `/local-agent/tool-approvals/${approval.approvalId}`)).toMatchObject({
        decision: "allow",
      });
    } finally {
      await stream.close();
    }
  });

  it("messaging: human-mode messages posted through any instance reach a held /agent/stream, and a cursor replays the rest", async () => {
    const [carol, dave] = [await user("carol"), await user("dave")];
    await ok(via, carol.apiKey, "POST", "/network/request", { to: dave.username });
    await ok(via, dave.apiKey, "POST", "/network/request", { to: carol.username });
    const content = (event: { data: Record<string, unknown> }) => (event.data.message as { content?: string } | undefined)?.content;
    const stream = StreamReader.openAgentStream(via, dave);
    const lines = ["first", "second", "third"];
    try {
      // Three posts, so through three instances.
      for (const message of lines) {
        const answer = await call(via, carol.apiKey, "POST", "/agent/message", { to: dave.username, message, mode: "human" });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
      await stream.until((s) => s.events.filter((e) => e.type === "message").length === 3, 10_000);
      expect(stream.events.filter((e) => e.type === "message").map(content)).toEqual(lines);
    } finally {
      await stream.close();
    }
    const firstCursor = stream.events.find((e) => content(e) === "first")?.cursor as string;
    const resumed = StreamReader.openAgentStream(via, dave, firstCursor);
    try {
      await resumed.until((s) => s.events.some((e) => content(e) === "third"));
      expect(resumed.events.filter((e) => e.type === "message").map(content)).toEqual(["second", "third"]);
    } finally {
      await resumed.close();
    }
  });
});
