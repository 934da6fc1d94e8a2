import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../src/auth/api-keys";
import { setCreditBalance } from "../src/delegation/grants/credits";
import {
  type Bridge,
  call,
  grantAgentAccess,
  ok,
  openGrant,
  pollEvents,
  SQLITE_ONLY,
  type StreamEvent,
  userEvents,
  type WireReceipt,
} from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/**
 * What bridges in the field do after pairing (runtime-wire.md, "What a bridge does after
 * pairing"), spoken exactly as they speak it: a bridge signed in by device code holds only its
 * device token and uses it for every call.
 */
describe.each(SQLITE_ONLY)("existing bridges after pairing (%s)", (storage) => {
  let ts: TestServer;
  let counter = 0;

  beforeAll(async () => {
    ts = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
  });
  afterAll(() => ts?.stop());

  /** Device-code sign-in as a bridge does it: start (anonymous), the owner approves, the poll hands over the token. */
  async function signIn(user: TestUser, deviceId: string): Promise<{ deviceToken: string; endpointId: string }> {
    const started = await ok<{ userCode: string; pollToken: string }>(ts, "anonymous", "POST", "/local-agent/device-code/start", {
      deviceId,
      runtime: "claude-code",
      bridgeVersion: "0.9.0",
      capabilities: ["text", "task_invite"],
    });
    await ok(ts, user.apiKey, "POST", "/local-agent/device-code/approve", { userCode: started.userCode, action: "approve" });
    const polled = await ok<{ status: string; deviceToken: string; endpointId: string }>(
      ts,
      "anonymous",
      "POST",
      "/local-agent/device-code/poll",
      { pollToken: started.pollToken },
    );
    expect(polled.status).toBe("approved");
    return { deviceToken: polled.deviceToken, endpointId: polled.endpointId };
  }

  /** A bridge's start: re-register with the device token (which rotates it), a session, the default route. */
  async function startBridge(user: TestUser, deviceId: string, deviceToken: string): Promise<Bridge> {
    const registered = await ok<{ endpoint: { endpointId: string }; deviceToken: string }>(
      ts,
      deviceToken,
      "POST",
      "/local-agent/endpoints",
      {
        runtime: "claude-code",
        deviceId,
        bridgeVersion: "0.9.0",
        adapterVersion: "0.9.0",
        capabilities: ["text", "task_invite"],
      },
    );
    const token = registered.deviceToken;
    const { endpointId } = registered.endpoint;
    const session = await ok<{ sessionHandle: string }>(ts, token, "POST", "/local-agent/sessions", {
      endpointId,
      label: "main",
      state: "idle",
      deliveryMode: "managed_stream",
      capabilities: ["text"],
      allowInbound: true,
      allowMidTurnSteer: false,
    });
    await ok(ts, token, "PUT", "/local-agent/default-route", { endpointId, sessionHandle: session.sessionHandle });
    return { user, deviceId, endpointId, deviceToken: token, sessionHandle: session.sessionHandle };
  }

  /** alice and bob, bob has given alice's agent access, each with a bridge signed in by device code. */
  async function pair() {
    const n = ++counter;
    const alice = await ts.addUser(`wa${n}`);
    const bob = await ts.addUser(`wb${n}`);
    await grantAgentAccess(ts, alice, bob);
    const aliceSignIn = await signIn(alice, `wa${n}-laptop`);
    const bobSignIn = await signIn(bob, `wb${n}-laptop`);
    const aliceBridge = await startBridge(alice, `wa${n}-laptop`, aliceSignIn.deviceToken);
    const bobBridge = await startBridge(bob, `wb${n}-laptop`, bobSignIn.deviceToken);
    return { alice, bob, aliceBridge, bobBridge };
  }

  const dispatches = async (bridge: Bridge) =>
    (await pollEvents(ts, bridge))
      .filter((e: StreamEvent) => e.type === "message.dispatch")
      .map((e) => e.data.envelope as Record<string, unknown>);

  it("re-registers its own endpoint with the device token on every start, rotating the token; never another device", async () => {
    const alice = await ts.addUser(`reg${++counter}`);
    const signedIn = await signIn(alice, "reg-laptop");
    const first = await call<{ endpoint: { endpointId: string; deviceId: string }; deviceToken: string }>(
      ts,
      signedIn.deviceToken,
      "POST",
      "/local-agent/endpoints",
      { runtime: "claude-code", deviceId: "reg-laptop", bridgeVersion: "0.9.1", capabilities: ["text"] },
    );
    expect(first.status).toBe(200);
    expect(first.body.endpoint).toMatchObject({ endpointId: signedIn.endpointId, deviceId: "reg-laptop" });
    expect(first.body.deviceToken).not.toBe(signedIn.deviceToken);
    // The previous token stops working; the new one is the bridge's from now on (and re-registers again).
    expect((await call(ts, signedIn.deviceToken, "GET", "/local-agent/whoami")).status).toBe(401);
    const again = await ok<{ endpoint: { endpointId: string }; deviceToken: string }>(
      ts,
      first.body.deviceToken,
      "POST",
      "/local-agent/endpoints",
      {
        runtime: "claude-code",
        deviceId: "reg-laptop",
      },
    );
    expect(again.endpoint.endpointId).toBe(signedIn.endpointId);

    const other = await call(ts, again.deviceToken, "POST", "/local-agent/endpoints", { runtime: "claude-code", deviceId: "someone-else" });
    expect(other.status).toBe(403);
    expect(other.body.error).toBe("device_mismatch");
    // A user key still registers any device of its owner (the seed's form).
    expect((await call(ts, alice.apiKey, "POST", "/local-agent/endpoints", { runtime: "codex", deviceId: "desk" })).status).toBe(201);
  });

  it("looks people up with resolve-person?q= (a leading @ allowed) and handle=, with the device token", async () => {
    const { bob, aliceBridge } = await pair();
    const byQ = await ok<{ principalId: string; username: string }>(
      ts,
      aliceBridge.deviceToken,
      "GET",
      `/local-agent/resolve-person?q=${encodeURIComponent(`@${bob.username}`)}`,
    );
    expect(byQ).toMatchObject({ principalId: String(bob.userId), username: bob.username });
    const byHandle = await ok<{ principalId: string }>(
      ts,
      aliceBridge.deviceToken,
      "GET",
      `/local-agent/resolve-person?handle=${bob.username}`,
    );
    expect(byHandle.principalId).toBe(String(bob.userId));
    const stranger = await ts.addUser(`stranger${++counter}`);
    const unknown = await call(ts, aliceBridge.deviceToken, "GET", `/local-agent/resolve-person?q=${stranger.username}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("person_not_found");
    expect((await call(ts, aliceBridge.deviceToken, "GET", "/local-agent/resolve-person")).status).toBe(400);
  });

  it("reads pair-status?principalId= in the bridge's words (ready, setup_bridge, request_pair, awaiting_their_accept, accept_incoming)", async () => {
    const { alice, bob, aliceBridge, bobBridge } = await pair();
    type PairStatus = {
      status: string;
      message: string;
      targetReachable?: boolean;
      runtimeStatus: string;
      paired: boolean;
      endpoint?: unknown;
    };
    const status = (bridge: Bridge, principalId?: number) =>
      ok<PairStatus>(
        ts,
        bridge.deviceToken,
        "GET",
        `/local-agent/pair-status${principalId === undefined ? "" : `?principalId=${principalId}`}`,
      );

    // bob gave alice's agent access and his runtime is up: the bridge goes on (`connect` asks for a grant).
    const target = await status(aliceBridge, bob.userId);
    expect(target).toMatchObject({ success: true, status: "ready", targetReachable: true, runtimeStatus: "paired", paired: true });
    expect(typeof target.message).toBe("string");
    expect(target.endpoint).toBeUndefined();

    // bob gave alice access, not the other way round: bob must ask, and learns nothing about alice's runtime.
    expect(await status(bobBridge, alice.userId)).toMatchObject({
      status: "request_pair",
      targetReachable: false,
      runtimeStatus: "not_paired",
      paired: false,
    });
    await ok(ts, bob.apiKey, "POST", "/network/request", { to: `${alice.username}_coo` });
    expect(await status(bobBridge, alice.userId)).toMatchObject({ status: "awaiting_their_accept", targetReachable: false });

    const own = await ok<PairStatus & { sessionHandle: string }>(ts, aliceBridge.deviceToken, "GET", "/local-agent/pair-status");
    expect(own).toMatchObject({ status: "ready", runtimeStatus: "paired", paired: true, sessionHandle: aliceBridge.sessionHandle });

    // Not connected, a request waiting between the two: theirs to accept, or ours waiting.
    const carol = await ts.addUser(`wc${++counter}`);
    const carolBridge = await startBridge(carol, `wc${counter}-laptop`, (await signIn(carol, `wc${counter}-laptop`)).deviceToken);
    await ok(ts, carol.apiKey, "POST", "/network/request", { to: alice.username });
    expect(await status(aliceBridge, carol.userId)).toMatchObject({ status: "accept_incoming", targetReachable: false, paired: false });
    expect(await status(carolBridge, alice.userId)).toMatchObject({ status: "awaiting_their_accept", targetReachable: false });

    // Offline: still `ready` (they are paired), but not reachable, so the bridge stops and says so. Our word stays beside it.
    ts.server.context.clock.advance(61_000);
    expect(await status(aliceBridge, bob.userId)).toMatchObject({
      status: "ready",
      targetReachable: false,
      runtimeStatus: "offline",
      paired: false,
      reason: "endpoint_offline",
    });
    // The caller's own runtime offline: set the bridge up (again).
    expect(await status(aliceBridge)).toMatchObject({ status: "setup_bridge", runtimeStatus: "offline", paired: false });
    const stranger = await ts.addUser(`nobody${++counter}`);
    expect((await call(ts, aliceBridge.deviceToken, "GET", `/local-agent/pair-status?principalId=${stranger.userId}`)).status).toBe(404);
  });

  it("reads GET /local-agent/grants as a bare array of flat rows with the device token", async () => {
    const { alice, bob, aliceBridge } = await pair();
    const grant = await openGrant(ts, aliceBridge.deviceToken, bob);
    const rows = await ok<unknown>(ts, aliceBridge.deviceToken, "GET", "/local-agent/grants");
    expect(Array.isArray(rows)).toBe(true);
    expect((rows as { commSessionId: string; status: string }[]).map((row) => [row.commSessionId, row.status])).toEqual([
      [grant.commSessionId, "active"],
    ]);
    // A user key keeps the seed's {success, grants}.
    const seed = await ok<{ success: boolean; grants: unknown[] }>(ts, alice.apiKey, "GET", "/local-agent/grants");
    expect(seed.success).toBe(true);
    expect(seed.grants).toHaveLength(1);
  });

  it("replies with POST /local-agent/messages {replyTo} from the recipient device; it travels back to the requester", async () => {
    const { bob, aliceBridge, bobBridge } = await pair();
    const grant = await openGrant(ts, aliceBridge.deviceToken, bob);
    const sent = await ok<WireReceipt>(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", {
      communicationSessionId: grant.commSessionId,
      clientMessageId: "ask-1",
      kind: "text",
      payload: { text: "what time is it?" },
      correlationId: "conv-7",
    });
    const reply = {
      communicationSessionId: grant.commSessionId,
      clientMessageId: "answer-1",
      kind: "text",
      payload: { text: "noon" },
      replyTo: sent.messageId,
    };
    const answered = await call<WireReceipt>(ts, bobBridge.deviceToken, "POST", "/local-agent/messages", reply);
    expect(answered.status).toBe(201);
    expect(answered.body).toMatchObject({ duplicate: false, correlationId: "conv-7" });
    const back = (await dispatches(aliceBridge)).find((envelope) => envelope.id === answered.body.messageId);
    expect(back).toMatchObject({ replyTo: sent.messageId, payload: { text: "noon" }, correlationId: "conv-7", kind: "text" });
    expect(back?.target).toMatchObject({ endpointId: aliceBridge.endpointId, sessionHandle: aliceBridge.sessionHandle });
    const status = await ok<{ delivery: { status: string } }>(
      ts,
      aliceBridge.deviceToken,
      "GET",
      `/local-agent/messages/${sent.messageId}`,
    );
    expect(status.delivery.status).toBe("replied");

    // The same reply again is a duplicate; a second, different one is final (4xx), as bridges expect.
    const repeated = await call<WireReceipt>(ts, bobBridge.deviceToken, "POST", "/local-agent/messages", reply);
    expect(repeated.status).toBe(200);
    expect(repeated.body.duplicate).toBe(true);
    const second = await call(ts, bobBridge.deviceToken, "POST", "/local-agent/messages", { ...reply, clientMessageId: "answer-2" });
    expect(second.status).toBe(409);
    const unknown = await call(ts, bobBridge.deviceToken, "POST", "/local-agent/messages", { ...reply, replyTo: "msg_nope" });
    expect(unknown.status).toBe(404);
    // Without replyTo the recipient still may not send on the grant.
    const { replyTo: _ignored, ...plain } = reply;
    expect((await call(ts, bobBridge.deviceToken, "POST", "/local-agent/messages", { ...plain, clientMessageId: "x" })).body.error).toBe(
      "not_grant_requester",
    );
  });

  it("asks tool approvals with the runtime's own session id; the approval belongs to the grant's frozen session", async () => {
    const { bob, aliceBridge, bobBridge } = await pair();
    const grant = await openGrant(ts, aliceBridge.deviceToken, bob);
    const ask = () =>
      call<{ approvalId: string; status: string; decision: string | null; scope: string | null }>(
        ts,
        bobBridge.deviceToken,
        "POST",
        "/local-agent/tool-approvals",
        {
          commSessionId: grant.commSessionId,
          sessionHandle: "claude-managed-1",
          toolName: "Bash",
          toolInputSummary: "ls",
        },
      );
    const asked = await ask();
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({ status: "pending", decision: null });
    const approval = await ok<{ sessionHandle: string }>(ts, bob.apiKey, "GET", `/local-agent/tool-approvals/${asked.body.approvalId}`);
    expect(approval.sessionHandle).toBe(bobBridge.sessionHandle);
    await ok(ts, bob.apiKey, "POST", `/local-agent/tool-approvals/${asked.body.approvalId}/resolve`, {
      decision: "allow",
      scope: "session",
    });
    const polled = await ok<{ status: string; decision: string }>(
      ts,
      bobBridge.deviceToken,
      "GET",
      `/local-agent/tool-approvals/${asked.body.approvalId}`,
    );
    expect(polled).toMatchObject({ status: "allowed", decision: "allow" });
    // The session-wide allow matches the next ask under the same runtime id.
    expect((await ask()).body).toMatchObject({ status: "auto_allow", decision: "allow" });
  });

  it("carries the client's correlationId from the delegation to the task invite and every reply", async () => {
    const { alice, bob, aliceBridge, bobBridge } = await pair();
    const { db, clock } = ts.server.context;
    await db.transaction().execute((tx) => setCreditBalance(tx, clock, alice.userId, 5, "system"));
    const body = {
      target: `@${bob.username}`,
      task: "Summarise the release notes",
      sessionHandle: aliceBridge.sessionHandle,
      clientMessageId: "dlg-corr-1",
      correlationId: "client-corr-42",
    };
    const first = await ok<{ status: string; collaborationId: string }>(
      ts,
      aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      body,
      [202],
    );
    expect(first.status).toBe("collaboration_requested");
    await ok(ts, bob.apiKey, "POST", `/local-agent/collaborations/${first.collaborationId}/respond`, { decision: "allow_once" });
    const delegated = await ok<{ status: string; correlationId: string; messageId: string; communicationSessionId: string }>(
      ts,
      aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      body,
      [201],
    );
    expect(delegated).toMatchObject({ status: "delegated", correlationId: "client-corr-42" });
    const invite = (await dispatches(bobBridge)).find((envelope) => envelope.id === delegated.messageId);
    expect(invite).toMatchObject({ kind: "task_invite", correlationId: "client-corr-42" });

    const reply = await ok<WireReceipt>(ts, bobBridge.deviceToken, "POST", "/local-agent/messages", {
      communicationSessionId: delegated.communicationSessionId,
      clientMessageId: "done-1",
      kind: "text",
      payload: { text: "done" },
      replyTo: delegated.messageId,
    });
    expect(reply.correlationId).toBe("client-corr-42");
    const back = (await dispatches(aliceBridge)).find((envelope) => envelope.id === reply.messageId);
    expect(back?.correlationId).toBe("client-corr-42");
    // The same clientMessageId with another correlationId is another request.
    const changed = await call(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", { ...body, correlationId: "other" });
    expect(changed.status).toBe(409);
  });

  it("re-posts a waiting delegation with what it stored from the answer (no correlationId): the same request, the first correlationId kept", async () => {
    const { alice, bob, aliceBridge, bobBridge } = await pair();
    const { db, clock } = ts.server.context;
    await db.transaction().execute((tx) => setCreditBalance(tx, clock, alice.userId, 5, "system"));
    const first = {
      target: { kind: "person_default_runtime", principalId: String(bob.userId) },
      task: "Bump the lockfile",
      context: { repo: "tandem" },
      sessionHandle: aliceBridge.sessionHandle,
      clientMessageId: "delegate:repost-1",
      correlationId: "delegate:repost-1",
      requestedTtlMinutes: 30,
    };
    const post = (body: Record<string, unknown>) =>
      call<Record<string, unknown>>(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", body);
    const asked = await post(first);
    expect(asked.status).toBe(202);
    // Every answer names the correlationId, so a bridge storing the answer's fields keeps it.
    expect(asked.body).toMatchObject({
      status: "collaboration_requested",
      clientMessageId: "delegate:repost-1",
      correlationId: "delegate:repost-1",
    });

    // What the bridge stored from the answer, re-posted every 10 s: no correlationId (nor context, nor TTL).
    const { correlationId: _dropped, context: _context, requestedTtlMinutes: _ttl, ...stored } = first;
    const waiting = await post(stored);
    expect(waiting.status).toBe(202);
    expect(waiting.body).toMatchObject({ collaborationId: asked.body.collaborationId, correlationId: "delegate:repost-1" });

    await ok(ts, bob.apiKey, "POST", `/local-agent/collaborations/${asked.body.collaborationId}/respond`, { decision: "allow_once" });
    const delegated = await post(stored);
    expect(delegated.status).toBe(201);
    expect(delegated.body).toMatchObject({ status: "delegated", correlationId: "delegate:repost-1", duplicate: false });
    const invite = (await dispatches(bobBridge)).find((envelope) => envelope.id === delegated.body.messageId);
    expect(invite).toMatchObject({ kind: "task_invite", correlationId: "delegate:repost-1", payload: { context: { repo: "tandem" } } });
    expect((await post(first)).body).toMatchObject({ status: "delegated", duplicate: true, messageId: delegated.body.messageId });

    // What identifies the task still counts: another task, target, context or correlationId under the same id is refused.
    const carol = await ts.addUser(`wc${++counter}`);
    await grantAgentAccess(ts, alice, carol);
    for (const changed of [
      { ...stored, task: "Something else" },
      { ...stored, target: { principalId: String(carol.userId) } },
      { ...stored, context: { repo: "other" } },
      { ...stored, correlationId: "another" },
    ]) {
      const refused = await post(changed);
      expect([refused.status, refused.body.error]).toEqual([409, "client_message_id_conflict"]);
    }
  });

  it("gets on its stream only the kinds runtime-wire.md lists for bridges; the owner's user stream gets the rest", async () => {
    const { alice, bob, aliceBridge, bobBridge } = await pair();
    const { db, clock } = ts.server.context;
    await db.transaction().execute((tx) => setCreditBalance(tx, clock, alice.userId, 5, "system"));
    const body = { target: bob.username, task: "Tidy the README", sessionHandle: aliceBridge.sessionHandle, clientMessageId: "kinds-1" };
    const asked = await ok<{ collaborationId: string }>(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", body, [202]);
    await ok(ts, bob.apiKey, "POST", `/local-agent/collaborations/${asked.collaborationId}/respond`, { decision: "allow_once" });
    const delegated = await ok<{ communicationSessionId: string }>(
      ts,
      aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      body,
      [201],
    );
    const approval = await ok<{ approvalId: string }>(ts, bobBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      communicationSessionId: delegated.communicationSessionId,
      sessionHandle: "claude-managed-1",
      toolName: "Bash",
      toolInputSummary: "ls",
    });
    await ok(ts, bob.apiKey, "POST", `/local-agent/tool-approvals/${approval.approvalId}/resolve`, { decision: "allow" });

    const known = new Set([
      "message.dispatch",
      "grant.request",
      "grant.activated",
      "grant.declined",
      "grant.revoked",
      "grant.expired",
      "collaboration.completed",
      "collaboration.revoked",
      "collaboration.expired",
      "tool.approval_decision",
    ]);
    const aliceKinds = (await pollEvents(ts, aliceBridge)).map((e) => e.type);
    const bobKinds = (await pollEvents(ts, bobBridge)).map((e) => e.type);
    expect(aliceKinds).toContain("grant.activated");
    expect(bobKinds).toEqual(expect.arrayContaining(["grant.activated", "message.dispatch", "tool.approval_decision"]));
    expect([...aliceKinds, ...bobKinds].filter((kind) => !known.has(kind))).toEqual([]);
    // Each owner hears what waits for them (or was answered for them) on their own stream.
    expect((await userEvents(ts, bob)).map((e) => e.type)).toEqual(
      expect.arrayContaining(["collaboration.request", "tool.approval_requested"]),
    );
    expect((await userEvents(ts, alice)).map((e) => e.type)).toContain("collaboration.accepted");
    // …as far as the key may list them: without os.team:read, neither the list nor the stream tells of them.
    const notesOnly = await createApiKey(db, { userId: bob.userId, scopes: ["os.notes:read"] });
    expect((await call(ts, notesOnly.apiKey, "GET", "/local-agent/collaborations")).status).toBe(403);
    expect(await userEvents(ts, { apiKey: notesOnly.apiKey })).toEqual([]);
  });
});
