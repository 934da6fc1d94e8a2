import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Bridge,
  call,
  grantAgentAccess,
  heartbeat,
  ok,
  openGrant,
  registerBridge,
  SQLITE_ONLY,
  StreamReader,
  type WireGrant,
  type WireReceipt,
} from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/**
 * The whole delegation track end to end, over real HTTP and SSE, with two people and two
 * bridges: alice's agent asks bob's local runtime for help; bob decides what its tools may do.
 */

describe.each(SQLITE_ONLY)("delegation end to end (%s)", (storage) => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let aliceBridge: Bridge;
  let bobBridge: Bridge;
  let aliceStream: StreamReader;
  let bobStream: StreamReader;

  beforeAll(async () => {
    // An allowance of 0: alice has no Credits until the operator sets some (credits.test.ts covers the default).
    ts = await startTestServer({ maintenanceIntervalMs: 0, creditAllowance: 0 }, storage);
    alice = await ts.addUser("alice");
    bob = await ts.addUser("bob");
  });

  afterAll(async () => {
    await aliceStream?.close();
    await bobStream?.close();
    await ts.stop();
  });

  /** The body of a message from alice's bridge on `grant`. */
  const message = (grant: WireGrant, clientMessageId: string, kind: string, payload: Record<string, unknown>) => ({
    communicationSessionId: grant.communicationSessionId,
    clientMessageId,
    kind,
    payload,
  });
  const post = (body: ReturnType<typeof message>) => call(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", body);
  const send = (...args: Parameters<typeof message>) =>
    ok<WireReceipt>(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", message(...args));

  it("handshake → endpoints → grant → message → acks → reply → revoke", async () => {
    // Without the handshake there is no grant.
    const early = await call(ts, alice.apiKey, "POST", "/local-agent/grants", {
      target: { kind: "person_default_runtime", principalId: String(bob.userId) },
    });
    expect(early.status).toBe(403);
    expect(early.body.error).toBe("agent_permission_required");

    await grantAgentAccess(ts, alice, bob);
    aliceBridge = await registerBridge(ts, alice, "alice-laptop");
    bobBridge = await registerBridge(ts, bob, "bob-desktop", "codex");
    aliceStream = StreamReader.open(ts, aliceBridge);
    bobStream = StreamReader.open(ts, bobBridge);

    const requested = await ok<WireGrant>(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", {
      target: { kind: "person_default_runtime", principalId: String(bob.userId) },
      requestedTtlMinutes: 45,
    });
    expect(requested.status).toBe("pending");
    const grantRequest = await bobStream.next("grant.request");
    expect(grantRequest.data.communicationSessionId).toBe(requested.communicationSessionId);

    // Only the recipient accepts; the requester's attempt looks like nothing is there.
    expect((await call(ts, alice.apiKey, "POST", `/local-agent/grants/${requested.communicationSessionId}/accept`)).status).toBe(404);
    const grant = await ok<WireGrant>(ts, bob.apiKey, "POST", `/local-agent/grants/${requested.communicationSessionId}/accept`);
    expect(grant.status).toBe("active");
    expect(grant.frozenEndpointId).toBe(bobBridge.endpointId);
    expect(grant.frozenSessionHandle).toBe(bobBridge.sessionHandle);
    // 45 requested, 30 at most.
    expect(Date.parse(grant.grantExpiresAt as string) - Date.parse(grant.activatedAt as string)).toBe(30 * 60_000);
    const activated = await aliceStream.next("grant.activated");
    expect(activated.data).toMatchObject({ communicationSessionId: grant.communicationSessionId, endpointId: bobBridge.endpointId });

    // A task invite needs a credit.
    const refused = await post(message(grant, "task-0", "task_invite", { task: "no credit" }));
    expect(refused.status).toBe(402);
    expect(refused.body.error).toBe("insufficient_credits");
    const credits = await ts.cli(["credits", "set", "alice", "2"]);
    expect(credits.code).toBe(0);

    const receipt = await send(grant, "task-1", "task_invite", { task: "Summarise the README" });
    expect(receipt).toMatchObject({ status: "queued", duplicate: false });
    expect((await send(grant, "task-1", "task_invite", { task: "Summarise the README" })).duplicate).toBe(true);

    const dispatch = await bobStream.next("message.dispatch");
    const envelope = dispatch.data.envelope as Record<string, unknown>;
    expect(dispatch.data.deliveryId).toBe(receipt.deliveryId);
    expect(envelope).toMatchObject({
      id: receipt.messageId,
      clientMessageId: "task-1",
      communicationSessionId: grant.communicationSessionId,
      senderPrincipalId: String(alice.userId),
      kind: "task_invite",
      payload: { task: "Summarise the README" },
      target: { endpointId: bobBridge.endpointId, sessionHandle: bobBridge.sessionHandle },
    });
    // The stream marks the delivery dispatched just after writing its frame, so the mark may land a moment later.
    const deliveryStatus = async (messageId: string) =>
      (await ok<{ delivery: { status: string } }>(ts, alice.apiKey, "GET", `/local-agent/messages/${messageId}`)).delivery.status;
    await expect.poll(() => deliveryStatus(receipt.messageId)).toBe("dispatched");

    const validation = await ok(ts, bobBridge.deviceToken, "POST", "/local-agent/injections/validate", {
      messageId: receipt.messageId,
      communicationSessionId: grant.communicationSessionId,
      endpointId: bobBridge.endpointId,
      sessionHandle: bobBridge.sessionHandle,
    });
    expect(validation).toMatchObject({ valid: true });

    // Only bob's bridge may acknowledge; alice's device cannot spoof it.
    const spoof = await call(ts, aliceBridge.deviceToken, "POST", `/local-agent/messages/${receipt.messageId}/ack`, {
      phase: "runtime_ack",
      attemptId: "spoof",
    });
    expect([403, 404]).toContain(spoof.status);
    for (const phase of ["device_ack", "runtime_pending", "runtime_ack"]) {
      const ack = await ok(ts, bobBridge.deviceToken, "POST", `/local-agent/messages/${receipt.messageId}/ack`, {
        phase,
        attemptId: "attempt-1",
        usage: { model: "fake", inputTokens: 10, outputTokens: 5 },
      });
      expect(ack.recorded).toBe("state");
    }

    const reply = await ok<WireReceipt>(ts, bobBridge.deviceToken, "POST", `/local-agent/messages/${receipt.messageId}/reply`, {
      body: "Here is the summary.",
    });
    const replyDispatch = await aliceStream.next("message.dispatch");
    expect(replyDispatch.data.deliveryId).toBe(reply.deliveryId);
    expect((replyDispatch.data.envelope as Record<string, unknown>).replyTo).toBe(receipt.messageId);
    const history = await ok<{ delivery: { status: string }; attempts: unknown[] }>(
      ts,
      alice.apiKey,
      "GET",
      `/local-agent/messages/${receipt.messageId}`,
    );
    expect(history.delivery.status).toBe("replied");
    expect(history.attempts).toHaveLength(3);
    expect(await ok(ts, alice.apiKey, "GET", "/local-agent/credits")).toMatchObject({ balance: 1 });

    // A message left queued, then bob revokes: it is revoked, and nothing more gets through.
    const queued = await send(grant, "text-1", "text", { text: "one more thing" });
    const revokedCursor = Number(bobStream.lastCursor);
    await ok(ts, bob.apiKey, "POST", `/local-agent/grants/${grant.communicationSessionId}/revoke`);
    await bobStream.next("grant.revoked", revokedCursor);
    await aliceStream.next("grant.revoked");
    const late = await post(message(grant, "text-2", "text", { text: "too late" }));
    expect(late.status).toBe(409);
    expect(late.body.error).toBe("communication_session_revoked");
    expect(await deliveryStatus(queued.messageId)).toBe("revoked");
    const stale = await ok(ts, bobBridge.deviceToken, "POST", "/local-agent/injections/validate", {
      messageId: queued.messageId,
      communicationSessionId: grant.communicationSessionId,
      endpointId: bobBridge.endpointId,
    });
    expect(stale).toMatchObject({ valid: false, reason: "communication_session_revoked" });

    // The audit trail names the steps for both people.
    const audit = await ok<{ entries: { action: string }[] }>(ts, alice.apiKey, "GET", "/local-agent/audit?limit=200");
    const actions = new Set(audit.entries.map((e) => e.action));
    expect(actions.size).toBeGreaterThan(5);
  });

  it("tool approvals: policy auto-allow, allow, deny, expiry, double resolve", async () => {
    // alice's bridge asks for bob's default runtime; bob accepts with his key.
    const grant = await openGrant(ts, aliceBridge.deviceToken, bob, { requestedTtlMinutes: 30 });
    const ask = (toolName: string) =>
      ok<{ approvalId: string; status: string; decision: string | null }>(
        ts,
        bobBridge.deviceToken,
        "POST",
        "/local-agent/tool-approvals",
        {
          communicationSessionId: grant.communicationSessionId,
          sessionHandle: bobBridge.sessionHandle,
          toolName,
          toolInputSummary: `${toolName} something`,
        },
      );

    await ok(ts, bob.apiKey, "POST", "/local-agent/tool-policies", { toolName: "Read", peerPrincipalId: String(alice.userId) });
    expect(await ask("Read")).toMatchObject({ status: "auto_allow", decision: "allow" });

    // The requester's side can neither answer nor see bob's approvals.
    const allowMe = await ask("Bash");
    expect(allowMe).toMatchObject({ status: "pending", decision: null });
    expect(
      (await call(ts, alice.apiKey, "POST", `/local-agent/tool-approvals/${allowMe.approvalId}/resolve`, { decision: "allow" })).status,
    ).toBe(404);
    expect((await call(ts, aliceBridge.deviceToken, "GET", `/local-agent/tool-approvals/${allowMe.approvalId}`)).status).toBe(404);

    const before = Number(bobStream.lastCursor);
    await ok(ts, bob.apiKey, "POST", `/local-agent/tool-approvals/${allowMe.approvalId}/resolve`, { decision: "allow", scope: "once" });
    const decision = await bobStream.next("tool.approval_decision", before);
    expect(decision.data).toMatchObject({ approvalId: allowMe.approvalId, decision: "allow" });
    expect(await ok(ts, bobBridge.deviceToken, "GET", `/local-agent/tool-approvals/${allowMe.approvalId}`)).toMatchObject({
      decision: "allow",
    });
    const twice = await call(ts, bob.apiKey, "POST", `/local-agent/tool-approvals/${allowMe.approvalId}/resolve`, { decision: "deny" });
    expect(twice.status).toBe(409);

    const denyMe = await ask("Write");
    const denyCursor = Number(bobStream.lastCursor);
    await ok(ts, bob.apiKey, "POST", `/local-agent/tool-approvals/${denyMe.approvalId}/resolve`, { decision: "deny" });
    expect((await bobStream.next("tool.approval_decision", denyCursor)).data).toMatchObject({ decision: "deny" });

    // Left alone for five minutes: denied, and too late to allow.
    const ignored = await ask("WebFetch");
    ts.server.context.clock.advance(5 * 60_000 + 1_000);
    expect(await ok(ts, bobBridge.deviceToken, "GET", `/local-agent/tool-approvals/${ignored.approvalId}`)).toMatchObject({
      decision: "deny",
    });
    const expired = await call(ts, bob.apiKey, "POST", `/local-agent/tool-approvals/${ignored.approvalId}/resolve`, { decision: "allow" });
    expect(expired.status).toBe(409);
  });

  it("delegation: 202 until bob allows, then 201 with a task invite dispatched", async () => {
    // The grants above ran for minutes of test time; keep the bridges present.
    await heartbeat(ts, aliceBridge);
    await heartbeat(ts, bobBridge);
    await ts.cli(["credits", "set", "alice", "5"]);
    const body = { target: "bob", task: "Run the test suite", sessionHandle: aliceBridge.sessionHandle, clientMessageId: "delegation-1" };

    const first = await call(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", body);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ ok: true, status: "collaboration_requested", targetPrincipalId: String(bob.userId) });
    expect((await call(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", body)).status).toBe(202);

    await ok(ts, bob.apiKey, "POST", `/local-agent/collaborations/${first.body.collaborationId}/respond`, { decision: "allow_once" });
    const before = Number(bobStream.lastCursor);
    const delegated = await call<WireReceipt & { status: string; communicationSessionId: string }>(
      ts,
      aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      body,
    );
    expect(delegated.status).toBe(201);
    expect(delegated.body).toMatchObject({ status: "delegated", duplicate: false });
    const invite = await bobStream.next("message.dispatch", before);
    expect(invite.data.envelope).toMatchObject({ kind: "task_invite", id: delegated.body.messageId });
    const grants = await ok<{ grants: WireGrant[] }>(ts, alice.apiKey, "GET", "/local-agent/grants");
    expect(grants.grants.map((g) => g.communicationSessionId)).toContain(delegated.body.communicationSessionId);

    // A new clientMessageId asks again.
    const fresh = await call(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", { ...body, clientMessageId: "delegation-2" });
    expect(fresh.status).toBe(202);
    expect(fresh.body.collaborationId).not.toBe(first.body.collaborationId);

    const unsafe = await call(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", {
      ...body,
      clientMessageId: "delegation-3",
      context: { apiKey: alice.apiKey },
    });
    expect(unsafe.status).toBe(400);
  });
});
