import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentPair,
  type Bridge,
  call,
  heartbeat,
  ok,
  openGrant,
  pollEvents,
  replayUntil,
  SQLITE_ONLY,
  userEvents,
} from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/**
 * Tool approvals over the wire: alice's agent has a grant to bob's runtime; every tool bob's
 * runtime wants to run for her needs bob's policy or bob's decision.
 */

const FIVE_MINUTES = 5 * 60_000;

interface Approval {
  approvalId: string;
  status: string;
  decision: string | null;
  scope: string | null;
  toolName: string;
  toolInputSummary: string;
  communicationSessionId: string;
  requesterPrincipalId: string;
  endpointId: string;
  sessionHandle: string | null;
  policyId: number | null;
  createdAt: string;
  expiresAt: string;
  resolvedAt: string | null;
}

/** An answer as it arrives: the approval, or an error body. */
type Answer = Approval & { success: boolean; error?: string; message?: string };

describe.each(SQLITE_ONLY)("tool approvals (%s)", (storage) => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let aliceBridge: Bridge;
  let bobBridge: Bridge;

  beforeAll(async () => {
    // No timer: each test runs the sweep itself, or shows the lazy path without it.
    ts = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
    ({ alice, bob, aliceBridge, bobBridge } = await agentPair(ts));
    carol = await ts.addUser("carol");
  });
  afterAll(() => ts?.stop());

  const clock = () => ts.server.context.clock;

  /** A fresh grant from alice to bob, frozen on bob's bridge (bob's bridge heartbeats first: tests move the clock). */
  async function grantToBob(requestedTtlMinutes = 30): Promise<string> {
    await heartbeat(ts, bobBridge);
    const grant = await openGrant(ts, alice.apiKey, bob, { requestedTtlMinutes });
    expect(grant).toMatchObject({ status: "active", frozenEndpointId: bobBridge.endpointId });
    return grant.communicationSessionId;
  }

  function ask(communicationSessionId: string, toolName = "Bash", extra: Record<string, unknown> = {}) {
    return call<Answer>(ts, bobBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      communicationSessionId,
      toolName,
      toolInputSummary: `run ${toolName}`,
      ...extra,
    });
  }

  async function askPending(communicationSessionId: string, toolName = "Bash"): Promise<string> {
    const asked = await ask(communicationSessionId, toolName);
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({ success: true, status: "pending", decision: null, scope: null });
    return asked.body.approvalId;
  }

  const read = (token: string, approvalId: string) => call<Approval>(ts, token, "GET", `/local-agent/tool-approvals/${approvalId}`);
  const resolve = (token: string, approvalId: string, body: Record<string, unknown>) =>
    call<Answer>(ts, token, "POST", `/local-agent/tool-approvals/${approvalId}/resolve`, body);

  /** Replays bob's bridge's stream until the event about this approval arrives. */
  const bridgeEvent = (type: string, approvalId: string) =>
    replayUntil(ts, bobBridge, (e) => e.type === type && e.data.approvalId === approvalId);

  it("refuses malformed requests with 400 naming the field", async () => {
    const grant = await grantToBob();
    const long = await ask(grant, "Bash", { toolInputSummary: "x".repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ success: false, error: "invalid_request" });
    expect(long.body.message).toContain("body.toolInputSummary");
    expect((await ask(grant, "Bash", { toolInputSummary: "x".repeat(500) })).status).toBe(201);

    const noGrant = await call(ts, bobBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      toolName: "Bash",
      toolInputSummary: "",
    });
    expect(noGrant.status).toBe(400);
    expect(noGrant.body.message).toContain("communicationSessionId");
    const both = await ask(grant, "Bash", { commSessionId: "cs_other" });
    expect(both.status).toBe(400);
    expect(both.body.message).toContain("body.commSessionId");
    for (const toolName of ["", "t".repeat(201)]) {
      const bad = await ask(grant, toolName);
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain("body.toolName");
    }
    const notJson = await ts.fetch("/api/v1/local-agent/tool-approvals", {
      method: "POST",
      headers: { authorization: `Bearer ${bobBridge.deviceToken}`, "content-type": "application/json" },
      body: "{",
    });
    expect(notJson.status).toBe(400);
    // The interface's field name works too.
    const aliased = await call<Approval>(ts, bobBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      commSessionId: grant,
      toolName: "Read",
      toolInputSummary: "read a file",
    });
    expect(aliased.status).toBe(201);
    expect(aliased.body.status).toBe("pending");
  });

  it("lets only the bridge the grant is frozen on ask (404 for the requester's side, unknown ids and foreign objects)", async () => {
    const grant = await grantToBob();
    const fromRequester = await call(ts, aliceBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      communicationSessionId: grant,
      toolName: "Bash",
      toolInputSummary: "rm -rf /",
    });
    expect(fromRequester.status).toBe(404);
    expect((await ask("cs_unknown")).status).toBe(404);
    const userKey = await call(ts, bob.apiKey, "POST", "/local-agent/tool-approvals", {
      communicationSessionId: grant,
      toolName: "Bash",
      toolInputSummary: "",
    });
    expect(userKey.status).toBe(403);
    expect(userKey.body.error).toBe("wrong_credential_type");
    expect((await call(ts, null, "POST", "/local-agent/tool-approvals", {})).status).toBe(401);

    // A handle that is not one of the asking endpoint's sessions is the runtime's own id: the approval
    // belongs to the grant's frozen session, never to the session the handle names elsewhere.
    const foreignSession = await ask(grant, "Bash", { sessionHandle: aliceBridge.sessionHandle });
    expect(foreignSession.status).toBe(201);
    expect((await read(bob.apiKey, foreignSession.body.approvalId)).body.sessionHandle).toBe(bobBridge.sessionHandle);
    const unknownMessage = await ask(grant, "Bash", { messageId: "msg_nope" });
    expect(unknownMessage.status).toBe(404);
    const ownSession = await ask(grant, "Bash", { sessionHandle: bobBridge.sessionHandle });
    expect(ownSession.status).toBe(201);
    expect((await read(bob.apiKey, ownSession.body.approvalId)).body.sessionHandle).toBe(bobBridge.sessionHandle);
  });

  it("pending → the owner allows once → the decision reaches the asking bridge; resolving twice is 409", async () => {
    const grant = await grantToBob();
    const approvalId = await askPending(grant, "Bash");

    // The owner hears it on their user stream; the bridge, which does not know the kind, never gets it.
    const requested = (await userEvents(ts, bob)).find((e) => e.type === "tool.approval_requested" && e.data.approvalId === approvalId);
    expect((await pollEvents(ts, bobBridge)).map((e) => e.type)).not.toContain("tool.approval_requested");
    expect(requested?.data).toMatchObject({
      approvalId,
      communicationSessionId: grant,
      toolName: "Bash",
      toolInputSummary: "run Bash",
      requesterPrincipalId: String(alice.userId),
    });
    expect(typeof requested?.data.expiresAt).toBe("string");

    const polled = await read(bobBridge.deviceToken, approvalId);
    expect(polled.status).toBe(200);
    expect(polled.body).toMatchObject({ success: true, approvalId, status: "pending", decision: null, scope: null, resolvedAt: null });
    const pending = await ok<{ approvals: Approval[] }>(ts, bob.apiKey, "GET", "/local-agent/tool-approvals?status=pending");
    expect(pending.approvals.map((a) => a.approvalId)).toContain(approvalId);
    expect(pending.approvals.every((a) => a.status === "pending")).toBe(true);
    const listed = pending.approvals.find((a) => a.approvalId === approvalId);
    expect(listed).toMatchObject({ requesterPrincipalId: String(alice.userId), endpointId: bobBridge.endpointId, toolName: "Bash" });

    const allowed = await resolve(bob.apiKey, approvalId, { decision: "allow" });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toMatchObject({ success: true, status: "allowed", decision: "allow", scope: "once" });
    expect(allowed.body.resolvedAt).not.toBeNull();

    const decision = await bridgeEvent("tool.approval_decision", approvalId);
    expect(decision.endpointId).toBe(bobBridge.endpointId);
    expect(decision.data).toMatchObject({ approvalId, communicationSessionId: grant, toolName: "Bash", decision: "allow", scope: "once" });
    expect((await read(bobBridge.deviceToken, approvalId)).body).toMatchObject({ status: "allowed", decision: "allow" });

    const again = await resolve(bob.apiKey, approvalId, { decision: "deny" });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("approval_already_resolved");
    expect((await read(bob.apiKey, approvalId)).body.decision).toBe("allow");

    // Once means once: the same tool asks again.
    expect((await ask(grant, "Bash")).body.status).toBe("pending");
  });

  it("the owner denies; the bridge hears deny; bad decisions are 400", async () => {
    const grant = await grantToBob();
    const approvalId = await askPending(grant, "Write");
    const bad = await resolve(bob.apiKey, approvalId, { decision: "maybe" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("body.decision");
    expect((await resolve(bob.apiKey, approvalId, { decision: "allow", scope: "forever" })).status).toBe(400);

    const denied = await resolve(bob.apiKey, approvalId, { decision: "deny" });
    expect(denied.body).toMatchObject({ status: "denied", decision: "deny", scope: "once" });
    const event = await bridgeEvent("tool.approval_decision", approvalId);
    expect(event.data).toMatchObject({ decision: "deny", scope: "once" });
    expect((await read(bobBridge.deviceToken, approvalId)).body).toMatchObject({ status: "denied", decision: "deny" });
    expect((await resolve(bob.apiKey, approvalId, { decision: "allow" })).body.error).toBe("approval_already_resolved");
  });

  it("allow with scope session allows that tool on that grant and session from then on (auto_allow), and nothing else", async () => {
    const grant = await grantToBob();
    const approvalId = await askPending(grant, "Edit");
    const allowed = await resolve(bob.apiKey, approvalId, { decision: "allow", scope: "session" });
    expect(allowed.body).toMatchObject({ status: "allowed", decision: "allow", scope: "session" });
    expect(allowed.body.policyId).toEqual(expect.any(Number));
    expect((await bridgeEvent("tool.approval_decision", approvalId)).data).toMatchObject({ decision: "allow", scope: "session" });

    const next = await ask(grant, "Edit");
    expect(next.status).toBe(201);
    expect(next.body).toMatchObject({ success: true, status: "auto_allow", decision: "allow" });
    expect((await read(bobBridge.deviceToken, next.body.approvalId)).body).toMatchObject({
      status: "auto_allow",
      decision: "allow",
      policyId: allowed.body.policyId,
    });
    // Another tool, or the same tool on another grant, still asks.
    expect((await ask(grant, "Bash")).body.status).toBe("pending");
    expect((await ask(await grantToBob(), "Edit")).body.status).toBe("pending");

    const { policies } = await ok<{ policies: { policyId: number; source: string; toolName: string; communicationSessionId: string }[] }>(
      ts,
      bob.apiKey,
      "GET",
      "/local-agent/tool-policies",
    );
    expect(policies.find((p) => p.policyId === allowed.body.policyId)).toMatchObject({
      source: "session_decision",
      toolName: "Edit",
      communicationSessionId: grant,
    });
  });

  it("owner policies: auto-allow by tool name, * only when narrowed, removable, and private to their owner", async () => {
    const grant = await grantToBob();
    const broad = await call(ts, bob.apiKey, "POST", "/local-agent/tool-policies", { toolName: "*" });
    expect(broad.status).toBe(400);
    expect(broad.body.error).toBe("wildcard_policy_too_broad");
    expect(broad.body.message).toContain("communicationSessionId or a peerPrincipalId");

    const read1 = await call<{ policy: { policyId: number; toolName: string; source: string } }>(
      ts,
      bob.apiKey,
      "POST",
      "/local-agent/tool-policies",
      {
        toolName: "Read",
      },
    );
    expect(read1.status).toBe(201);
    expect(read1.body.policy).toMatchObject({ toolName: "Read", source: "owner" });
    const auto = await ask(grant, "Read");
    expect(auto.body).toMatchObject({ status: "auto_allow", decision: "allow", scope: "once" });
    // An auto-allowed approval is already decided: nothing to resolve, no request event.
    expect((await resolve(bob.apiKey, auto.body.approvalId, { decision: "deny" })).body.error).toBe("approval_already_resolved");

    // Policies of someone else do not exist for carol.
    expect((await call(ts, carol.apiKey, "DELETE", `/local-agent/tool-policies/${read1.body.policy.policyId}`)).status).toBe(404);
    expect((await ok<{ policies: unknown[] }>(ts, carol.apiKey, "GET", "/local-agent/tool-policies")).policies).toEqual([]);
    // Narrowing must name the owner's own things.
    expect(
      (await call(ts, carol.apiKey, "POST", "/local-agent/tool-policies", { toolName: "*", communicationSessionId: grant })).status,
    ).toBe(404);
    expect(
      (await call(ts, bob.apiKey, "POST", "/local-agent/tool-policies", { toolName: "*", peerPrincipalId: String(carol.userId) })).status,
    ).toBe(404);
    expect(
      (await call(ts, bob.apiKey, "POST", "/local-agent/tool-policies", { toolName: "Bash", sessionHandle: aliceBridge.sessionHandle }))
        .status,
    ).toBe(404);
    const past = await call(ts, bob.apiKey, "POST", "/local-agent/tool-policies", { toolName: "Bash", expiresAt: "2000-01-01T00:00:00Z" });
    expect(past.body.error).toBe("invalid_expiry");

    const everything = await call<{ policy: { policyId: number; peerPrincipalId: string } }>(
      ts,
      bob.apiKey,
      "POST",
      "/local-agent/tool-policies",
      {
        toolName: "*",
        peerPrincipalId: String(alice.userId),
      },
    );
    expect(everything.status).toBe(201);
    expect(everything.body.policy.peerPrincipalId).toBe(String(alice.userId));
    expect((await ask(grant, "AnythingAtAll")).body.status).toBe("auto_allow");

    expect((await call(ts, bob.apiKey, "DELETE", `/local-agent/tool-policies/${everything.body.policy.policyId}`)).status).toBe(200);
    expect((await call(ts, bob.apiKey, "DELETE", `/local-agent/tool-policies/${everything.body.policy.policyId}`)).status).toBe(404);
    expect((await ask(grant, "AnythingAtAll")).body.status).toBe("pending");
    await ok(ts, bob.apiKey, "DELETE", `/local-agent/tool-policies/${read1.body.policy.policyId}`);
    expect((await ask(grant, "Read")).body.status).toBe("pending");
    expect((await call(ts, bob.apiKey, "DELETE", "/local-agent/tool-policies/abc")).status).toBe(400);
  });

  it("only the owner and the asking bridge see an approval; only the owner resolves it", async () => {
    const grant = await grantToBob();
    const approvalId = await askPending(grant, "Bash");
    expect((await read(bob.apiKey, approvalId)).status).toBe(200);
    expect((await read(bobBridge.deviceToken, approvalId)).status).toBe(200);
    for (const token of [carol.apiKey, alice.apiKey, aliceBridge.deviceToken]) {
      const seen = await read(token, approvalId);
      expect(seen.status).toBe(404);
      expect(seen.body).toMatchObject({ success: false, error: "not_found" });
    }
    expect((await read(bob.apiKey, "apr_unknown")).status).toBe(404);
    for (const token of [carol.apiKey, alice.apiKey]) {
      expect((await resolve(token, approvalId, { decision: "allow" })).status).toBe(404);
    }
    expect((await resolve(bobBridge.deviceToken, approvalId, { decision: "allow" })).status).toBe(403);
    expect((await ok<{ approvals: Approval[] }>(ts, carol.apiKey, "GET", "/local-agent/tool-approvals")).approvals).toEqual([]);
    expect((await ok<{ approvals: Approval[] }>(ts, alice.apiKey, "GET", "/local-agent/tool-approvals")).approvals).toEqual([]);
    expect((await read(bob.apiKey, approvalId)).body.status).toBe("pending");
  });

  it("a pending approval left alone for 5 minutes denies: through the sweep, and lazily on read", async () => {
    const grant = await grantToBob();
    const swept = await askPending(grant, "Bash");
    clock().advance(FIVE_MINUTES + 1_000);
    await ts.server.context.maintenance.runAll();
    const event = await bridgeEvent("tool.approval_decision", swept);
    expect(event.data).toMatchObject({ approvalId: swept, decision: "deny", scope: null, reason: "expired" });
    expect((await read(bobBridge.deviceToken, swept)).body).toMatchObject({ status: "expired", decision: "deny" });
    const late = await resolve(bob.apiKey, swept, { decision: "allow" });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe("approval_expired");

    // No sweep this time: the poll itself finds it expired.
    const lazy = await askPending(grant, "Write");
    clock().advance(FIVE_MINUTES + 1_000);
    expect((await read(bobBridge.deviceToken, lazy)).body).toMatchObject({ status: "expired", decision: "deny" });
    expect((await bridgeEvent("tool.approval_decision", lazy)).data).toMatchObject({ decision: "deny", reason: "expired" });

    // And resolving is the lazy path too.
    const third = await askPending(grant, "Edit");
    clock().advance(FIVE_MINUTES + 1_000);
    expect((await resolve(bob.apiKey, third, { decision: "allow" })).body.error).toBe("approval_expired");
    const expired = await ok<{ approvals: Approval[] }>(ts, bob.apiKey, "GET", "/local-agent/tool-approvals?status=expired");
    expect(expired.approvals.map((a) => a.approvalId)).toEqual(expect.arrayContaining([swept, lazy, third]));
  });

  it("a revoked grant denies its pending approvals at once and takes no new ones", async () => {
    const grant = await grantToBob();
    const approvalId = await askPending(grant, "Bash");
    await ok(ts, alice.apiKey, "POST", `/local-agent/grants/${grant}/revoke`);
    // Denied in the revocation's own commit, before anyone reads it.
    const stored = await ts.server.context.db
      .selectFrom("tool_approvals")
      .select(["status", "decision"])
      .where("id", "=", approvalId)
      .executeTakeFirst();
    expect(stored).toEqual({ status: "expired", decision: "deny" });
    expect((await read(bobBridge.deviceToken, approvalId)).body).toMatchObject({ status: "expired", decision: "deny" });
    expect((await bridgeEvent("tool.approval_decision", approvalId)).data).toMatchObject({
      decision: "deny",
      reason: "communication_session_revoked",
    });
    expect((await resolve(bob.apiKey, approvalId, { decision: "allow" })).body.error).toBe("approval_expired");
    const after = await ask(grant, "Bash");
    expect(after.status).toBe(409);
    expect(after.body.error).toBe("communication_session_revoked");
  });

  it("an expired grant denies its pending approvals (lazily, before any sweep)", async () => {
    const grant = await grantToBob(1);
    const approvalId = await askPending(grant, "Bash");
    clock().advance(61_000);
    expect((await read(bob.apiKey, approvalId)).body).toMatchObject({ status: "expired", decision: "deny" });
    expect((await bridgeEvent("tool.approval_decision", approvalId)).data).toMatchObject({ reason: "communication_session_expired" });
    const after = await ask(grant, "Bash");
    expect(after.status).toBe(409);
    expect(after.body.error).toBe("communication_session_expired");
  });

  it("records every change in the audit log, for both people", async () => {
    const grant = await grantToBob();
    const approvalId = await askPending(grant, "Bash");
    await resolve(bob.apiKey, approvalId, { decision: "deny" });
    const rows = await ts.server.context.db
      .selectFrom("audit_log")
      .select(["action", "actor_credential", "party_a", "party_b"])
      .where("object_id", "=", approvalId)
      .orderBy("id")
      .execute();
    expect(rows.map((r) => r.action)).toEqual(["tool_approval.request", "tool_approval.resolve"]);
    expect(rows[0]?.actor_credential).toBe(`device:${bobBridge.endpointId}`);
    for (const row of rows) expect([row.party_a, row.party_b].sort()).toEqual([alice.userId, bob.userId].sort());
    const actions = await ts.server.context.db.selectFrom("audit_log").select("action").distinct().execute();
    expect(actions.map((a) => a.action)).toEqual(
      expect.arrayContaining(["tool_approval.auto_allow", "tool_approval.expire", "tool_policy.create", "tool_policy.delete"]),
    );
  });
});
