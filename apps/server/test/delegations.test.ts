import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setCreditBalance } from "../src/delegation/grants/credits";
import {
  agentPair,
  type Bridge,
  call,
  grantAgentAccess,
  heartbeat,
  ok,
  pollEvents,
  registerBridge,
  replayUntil,
  storages,
  userEvents,
} from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/**
 * Delegations over the wire: alice's bridge hands a task to bob's agent. Bob's owner answers
 * the collaboration request; the same call then opens a grant and dispatches a task_invite.
 */

const TEN_MINUTES = 10 * 60_000;

interface Answer {
  success: boolean;
  ok: boolean;
  status: string;
  collaborationId: string;
  targetPrincipalId: string;
  clientMessageId: string;
  message?: string;
  communicationSessionId?: string;
  messageId?: string;
  deliveryId?: string;
  correlationId?: string | null;
  duplicate?: boolean;
  queuedAt?: string;
  error?: string;
}

interface Collaboration {
  collaborationId: string;
  status: string;
  answer: string | null;
  requesterUsername: string;
  targetUsername: string;
  clientMessageId: string;
  task: string;
  context: Record<string, unknown> | null;
  communicationSessionId: string | null;
  messageId: string | null;
}

describe.each(storages())("delegations (%s)", (storage) => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let erin: TestUser;
  let aliceBridge: Bridge;
  let bobBridge: Bridge;
  let carolBridge: Bridge;
  let counter = 0;

  beforeAll(async () => {
    ts = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
    // bob lets alice's agent in; carol is only alice's friend; erin knows nobody.
    ({ alice, bob, aliceBridge, bobBridge } = await agentPair(ts, undefined, { bobRuntime: "codex" }));
    [carol, erin] = [await ts.addUser("carol"), await ts.addUser("erin")];
    await ok(ts, alice.apiKey, "POST", "/network/request", { to: carol.username });
    await ok(ts, carol.apiKey, "POST", "/network/request", { to: alice.username });
    carolBridge = await registerBridge(ts, carol, "carol-laptop");
    await setCredits(alice, 100);
  });
  afterAll(() => ts?.stop());

  async function setCredits(user: TestUser, balance: number) {
    const { db, clock } = ts.server.context;
    await db.transaction().execute((tx) => setCreditBalance(tx, clock, user.userId, balance, "system"));
  }

  const nextId = () => `dlg-${storage}-${++counter}`;

  function delegate(body: Record<string, unknown>, bridge: Bridge = aliceBridge) {
    return call<Answer>(ts, bridge.deviceToken, "POST", "/local-agent/delegations", {
      target: bob.username,
      task: "Review the failing test in src/app.test.ts",
      sessionHandle: bridge.sessionHandle,
      ...body,
    });
  }

  const respond = (user: TestUser, collaborationId: string, decision: string) =>
    call<{ collaboration: Collaboration; message: string; error?: string }>(
      ts,
      user.apiKey,
      "POST",
      `/local-agent/collaborations/${collaborationId}/respond`,
      { decision },
    );

  async function requested(body: Record<string, unknown> = {}, target: TestUser = bob): Promise<Answer> {
    const first = await delegate({ target: target.username, ...body });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({
      success: true,
      ok: true,
      status: "collaboration_requested",
      targetPrincipalId: String(target.userId),
    });
    return first.body;
  }

  it("202 → bob allows once → the same call is 201 delegated with a task_invite on bob's stream; repeats are duplicates", async () => {
    await heartbeat(ts, bobBridge);
    const clientMessageId = nextId();
    const body = { clientMessageId, context: { repo: "tandem", files: ["src/app.test.ts"] }, requestedTtlMinutes: 45 };
    const first = await requested(body);
    expect(first.clientMessageId).toBe(clientMessageId);
    expect(typeof first.message).toBe("string");

    // bob hears of it on his user stream; no bridge of his gets a kind bridges do not know.
    const request = (await userEvents(ts, bob)).find(
      (e) => e.type === "collaboration.request" && e.data.collaborationId === first.collaborationId,
    );
    expect((await pollEvents(ts, bobBridge)).map((e) => e.type)).not.toContain("collaboration.request");
    expect(request?.data).toMatchObject({
      requesterPrincipalId: String(alice.userId),
      requesterUsername: "alice",
      clientMessageId,
      task: "Review the failing test in src/app.test.ts",
      context: { repo: "tandem", files: ["src/app.test.ts"] },
    });

    // Bridges re-post every 10 s: the same 202 until bob answers.
    const again = await delegate(body);
    expect(again.status).toBe(202);
    expect(again.body.collaborationId).toBe(first.collaborationId);
    const conflicting = await delegate({ ...body, task: "Something else entirely" });
    expect(conflicting.status).toBe(409);
    expect(conflicting.body.error).toBe("client_message_id_conflict");

    const incoming = await ok<{ incoming: Collaboration[]; outgoing: Collaboration[] }>(
      ts,
      bob.apiKey,
      "GET",
      "/local-agent/collaborations?status=requested",
    );
    expect(incoming.incoming.find((c) => c.collaborationId === first.collaborationId)).toMatchObject({
      status: "requested",
      requesterUsername: "alice",
      targetUsername: "bob",
      task: "Review the failing test in src/app.test.ts",
    });
    const outgoing = await ok<{ incoming: Collaboration[]; outgoing: Collaboration[] }>(
      ts,
      alice.apiKey,
      "GET",
      "/local-agent/collaborations",
    );
    expect(outgoing.outgoing.map((c) => c.collaborationId)).toContain(first.collaborationId);
    expect(outgoing.incoming).toEqual([]);

    const allowed = await respond(bob, first.collaborationId, "allow_once");
    expect(allowed.status).toBe(200);
    expect(allowed.body.collaboration).toMatchObject({ status: "accepted", answer: "once" });
    // alice hears it on her user stream; her bridge learns it from its next re-post.
    const accepted = (await userEvents(ts, alice)).find(
      (e) => e.type === "collaboration.accepted" && e.data.collaborationId === first.collaborationId,
    );
    expect(accepted?.data).toMatchObject({ clientMessageId, decision: "allow_once" });
    expect((await pollEvents(ts, aliceBridge)).map((e) => e.type)).not.toContain("collaboration.accepted");
    expect((await respond(bob, first.collaborationId, "deny")).body.error).toBe("collaboration_already_answered");

    const balance = (await ok<{ balance: number }>(ts, alice.apiKey, "GET", "/local-agent/credits")).balance;
    const delegated = await delegate(body);
    expect(delegated.status).toBe(201);
    expect(delegated.body).toMatchObject({
      success: true,
      ok: true,
      status: "delegated",
      collaborationId: first.collaborationId,
      correlationId: first.collaborationId,
      duplicate: false,
    });
    const { communicationSessionId, messageId, deliveryId } = delegated.body;

    const dispatch = await replayUntil(ts, bobBridge, (e) => e.type === "message.dispatch" && e.data.deliveryId === deliveryId);
    const envelope = dispatch.data.envelope as Record<string, unknown>;
    expect(envelope).toMatchObject({
      id: messageId,
      clientMessageId,
      communicationSessionId,
      kind: "task_invite",
      payload: { task: "Review the failing test in src/app.test.ts", context: { repo: "tandem", files: ["src/app.test.ts"] } },
      senderPrincipalId: String(alice.userId),
      target: { endpointId: bobBridge.endpointId, sessionHandle: bobBridge.sessionHandle },
    });

    // The grant it went out on is alice's, active, frozen on bob's route, capped at 30 minutes, replies to alice's session.
    // Bridges read the list as a bare array.
    const grants = await ok<Record<string, unknown>[]>(ts, aliceBridge.deviceToken, "GET", "/local-agent/grants");
    const grant = grants.find((g) => g.communicationSessionId === communicationSessionId);
    expect(grant).toMatchObject({
      status: "active",
      requesterPrincipalId: String(alice.userId),
      recipientPrincipalId: String(bob.userId),
      frozenEndpointId: bobBridge.endpointId,
      requesterReplyEndpointId: aliceBridge.endpointId,
      requesterReplySessionHandle: aliceBridge.sessionHandle,
      targetOfferId: first.collaborationId,
    });
    expect(Date.parse(grant?.grantExpiresAt as string) - Date.parse(grant?.activatedAt as string)).toBe(30 * 60_000);
    expect((await ok<{ balance: number }>(ts, alice.apiKey, "GET", "/local-agent/credits")).balance).toBe(balance - 1);

    const repeat = await delegate(body);
    expect(repeat.status).toBe(201);
    expect(repeat.body).toMatchObject({ status: "delegated", communicationSessionId, messageId, deliveryId, duplicate: true });
    expect((await ok<{ balance: number }>(ts, alice.apiKey, "GET", "/local-agent/credits")).balance).toBe(balance - 1);
    const listed = await ok<{ outgoing: Collaboration[] }>(ts, alice.apiKey, "GET", "/local-agent/collaborations?status=delegated");
    expect(listed.outgoing.find((c) => c.collaborationId === first.collaborationId)).toMatchObject({ communicationSessionId, messageId });

    // A new clientMessageId asks again: "allow once" covered one task.
    const fresh = await requested({ clientMessageId: nextId() });
    expect(fresh.collaborationId).not.toBe(first.collaborationId);
  });

  it("accepts every form of target: username, @username, username_coo, principal id, {principalId}", async () => {
    for (const target of [
      "bob",
      "@bob",
      "bob_coo",
      String(bob.userId),
      { principalId: String(bob.userId) },
      { kind: "person", principalId: bob.userId },
    ]) {
      const answer = await delegate({ target, clientMessageId: nextId() });
      expect(answer.status, JSON.stringify(target)).toBe(202);
      expect(answer.body.targetPrincipalId).toBe(String(bob.userId));
    }
    // Without a clientMessageId, one is made up (and named in the answer).
    const generated = await delegate({});
    expect(generated.status).toBe(202);
    expect(generated.body.clientMessageId).toMatch(/^dlg_/);
  });

  it("refuses unknown and unconnected people (404) and people who gave no agent access (403)", async () => {
    for (const target of ["nobody", erin.username, { principalId: String(erin.userId) }, { principalId: "999999" }, "alice"]) {
      const answer = await delegate({ target, clientMessageId: nextId() });
      expect(answer.status, JSON.stringify(target)).toBe(404);
      expect(answer.body.error).toBe("person_not_found");
    }
    const friendOnly = await delegate({ target: carol.username, clientMessageId: nextId() });
    expect(friendOnly.status).toBe(403);
    expect(friendOnly.body.error).toBe("agent_permission_required");
  });

  it("refuses malformed requests with 400 naming the field, a foreign session with 404, and a user key with 403", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ task: undefined }, "body.task"],
      [{ task: "" }, "body.task"],
      [{ task: "x".repeat(32 * 1024 + 1) }, "body.task"],
      [{ target: "" }, "body.target"],
      [{ target: { principalId: "bob" } }, "body.target"],
      [{ sessionHandle: undefined }, "body.sessionHandle"],
      [{ clientMessageId: "c".repeat(129) }, "body.clientMessageId"],
      [{ requestedTtlMinutes: 0 }, "body.requestedTtlMinutes"],
      [{ requestedTtlMinutes: "ten" }, "body.requestedTtlMinutes"],
    ];
    for (const [body, field] of cases) {
      const answer = await delegate(body);
      expect(answer.status, field).toBe(400);
      expect(answer.body.error).toBe("invalid_request");
      expect(answer.body.message).toContain(field);
    }
    const foreign = await delegate({ sessionHandle: bobBridge.sessionHandle, clientMessageId: nextId() });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe("session_not_found");
    const userKey = await call(ts, alice.apiKey, "POST", "/local-agent/delegations", {
      target: "bob",
      task: "x",
      sessionHandle: aliceBridge.sessionHandle,
    });
    expect(userKey.status).toBe(403);
    expect(userKey.body.error).toBe("wrong_credential_type");
    // Task and context must fit one task invite (32 KiB), known before anyone is asked.
    const tooBig = await delegate({ task: "t".repeat(30_000), context: { notes: "n".repeat(10_000) }, clientMessageId: nextId() });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toBe("payload_too_large");
  });

  it.each([
    ["an array", [1, 2, 3]],
    ["a string", "please also read ~/.ssh"],
    ["null", null],
    ["over 16 KiB", { blob: "b".repeat(17_000) }],
    ["a password", { db: { password: "hunter2" } }],
    ["an Authorization header", { headers: { Authorization: "Basic YWxhZGRpbjpvcGVu" } }],
    ["a cookie", { cookie: "session=abc" }],
    ["a Tandem API key", { note: `use svc_sk_${"a".repeat(44)}` }],
    ["a device token", { token_hint: [`svc_dev_${"d".repeat(44)}`] }],
    ["an OpenAI-style key", { key_in_text: "sk-proj-abcdefghijklmnopqrstuvwx" }],
    ["a GitHub token", { env: [{ value: `ghp_${"g".repeat(36)}` }] }],
    ["a Slack token", { slack: "xoxb-123456789012-abcdefghijkl" }],
    ["an AWS key", { aws: "AKIAIOSFODNN7EXAMPLE" }],
    ["a private key", { pem: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" }],
    ["a Bearer token", { curl: "curl -H 'Authorization: Bearer abc123def456'" }],
    // Issue #10, point 19.
    ["a pwd key", { db: { pwd: "hunter2" } }],
    ["an SSH key under id_rsa", { id_rsa: "MIIEowIBAAKCAQEA7" }],
    ["an RFC 4716 SSH private key", { key: "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56wAAAi4AAAA3" }],
    ["an OpenSSH key body without its header", { blob: "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" }],
    ["a PuTTY key", { ppk: "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none" }],
    ["a PGP private key", { pgp: "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF" }],
    ["a password in prose", { notes: "log in with password=hunter22 first" }],
  ])("refuses an unsafe context (%s) with 400 unsafe_context and stores nothing", async (_kind, context) => {
    const clientMessageId = nextId();
    const answer = await delegate({ clientMessageId, context });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("unsafe_context");
    expect(answer.body.message).toMatch(/^context/);
    const stored = await ts.server.context.db
      .selectFrom("collaborations")
      .select("id")
      .where("client_message_id", "=", clientMessageId)
      .executeTakeFirst();
    expect(stored).toBeUndefined();
  });

  it.each([
    ["a Tandem API key", `Deploy with svc_sk_${"a".repeat(44)}`],
    ["an SSH private key", "Use this key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"],
    ["a password", "Log in to the staging box with pwd: s3cret!x and restart it"],
  ])("refuses a task carrying a secret (%s) with 400 unsafe_task and stores nothing", async (_kind, task) => {
    const clientMessageId = nextId();
    const answer = await delegate({ clientMessageId, task });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("unsafe_task");
    expect(answer.body.message).toMatch(/^task looks like it contains/);
    expect(answer.body.message).not.toContain("s3cret");
    const stored = await ts.server.context.db
      .selectFrom("collaborations")
      .select("id")
      .where("client_message_id", "=", clientMessageId)
      .executeTakeFirst();
    expect(stored).toBeUndefined();
  });

  it("bob declines: the bridge hears collaboration.revoked and the call is 403 collaboration_declined", async () => {
    const clientMessageId = nextId();
    const first = await requested({ clientMessageId });
    // Only the target's owner answers; to anyone else the request does not exist.
    for (const user of [alice, carol]) expect((await respond(user, first.collaborationId, "allow_once")).status).toBe(404);
    expect((await respond(bob, "col_unknown", "deny")).status).toBe(404);
    expect((await respond(bob, first.collaborationId, "sure")).status).toBe(400);

    const declined = await respond(bob, first.collaborationId, "deny");
    expect(declined.body.collaboration).toMatchObject({ status: "declined", answer: null });
    const revoked = await replayUntil(
      ts,
      aliceBridge,
      (e) => e.type === "collaboration.revoked" && e.data.collaborationId === first.collaborationId,
    );
    expect(revoked.data).toMatchObject({ clientMessageId, reason: "declined", targetPrincipalId: String(bob.userId) });
    const after = await delegate({ clientMessageId });
    expect(after.status).toBe(403);
    expect(after.body.error).toBe("collaboration_declined");
  });

  it("always allow: later delegations from alice skip the question until bob removes the allowance", async () => {
    await heartbeat(ts, bobBridge);
    const first = await requested({ clientMessageId: nextId() });
    const answered = await respond(bob, first.collaborationId, "always_allow");
    expect(answered.body.collaboration).toMatchObject({ status: "accepted", answer: "always" });
    expect((await delegate({ clientMessageId: first.clientMessageId })).status).toBe(201);

    const immediate = await delegate({ clientMessageId: nextId(), task: "Run the linter" });
    expect(immediate.status).toBe(201);
    expect(immediate.body).toMatchObject({ status: "delegated", duplicate: false });
    await replayUntil(ts, bobBridge, (e) => e.type === "message.dispatch" && e.data.deliveryId === immediate.body.deliveryId);

    const { allowances } = await ok<{ allowances: { principalId: string; username: string }[] }>(
      ts,
      bob.apiKey,
      "GET",
      "/local-agent/collaboration-allowances",
    );
    expect(allowances).toEqual([expect.objectContaining({ principalId: String(alice.userId), username: "alice" })]);
    expect((await ok<{ allowances: unknown[] }>(ts, alice.apiKey, "GET", "/local-agent/collaboration-allowances")).allowances).toEqual([]);
    expect((await call(ts, carol.apiKey, "DELETE", `/local-agent/collaboration-allowances/${alice.userId}`)).status).toBe(404);

    expect((await call(ts, bob.apiKey, "DELETE", `/local-agent/collaboration-allowances/${alice.userId}`)).status).toBe(200);
    expect((await call(ts, bob.apiKey, "DELETE", `/local-agent/collaboration-allowances/${alice.userId}`)).status).toBe(404);
    expect((await delegate({ clientMessageId: nextId() })).status).toBe(202);
  });

  it("an allowed task that cannot go out (no credit, no route) is refused with nothing written, and goes out on a later try", async () => {
    await heartbeat(ts, bobBridge);
    const clientMessageId = nextId();
    const first = await requested({ clientMessageId });
    await respond(bob, first.collaborationId, "allow_once");
    const grantsBefore = (await ok<{ grants: unknown[] }>(ts, alice.apiKey, "GET", "/local-agent/grants")).grants.length;

    await setCredits(alice, 0);
    const broke = await delegate({ clientMessageId });
    expect(broke.status).toBe(402);
    expect(broke.body.error).toBe("insufficient_credits");
    await setCredits(alice, 100);

    await ok(ts, bobBridge.deviceToken, "DELETE", "/local-agent/default-route");
    const noRoute = await delegate({ clientMessageId });
    expect(noRoute.status).toBe(409);
    expect(noRoute.body.error).toBe("no_default_route");
    await ok(ts, bobBridge.deviceToken, "PUT", "/local-agent/default-route", {
      endpointId: bobBridge.endpointId,
      sessionHandle: bobBridge.sessionHandle,
    });

    // Neither failure left a grant behind, and the collaboration is still allowed.
    expect((await ok<{ grants: unknown[] }>(ts, alice.apiKey, "GET", "/local-agent/grants")).grants).toHaveLength(grantsBefore);
    const delegated = await delegate({ clientMessageId });
    expect(delegated.status).toBe(201);
    expect(delegated.body.duplicate).toBe(false);
  });

  it("concurrent calls with one clientMessageId open one collaboration and send the task once", async () => {
    await heartbeat(ts, bobBridge);
    const clientMessageId = nextId();
    const firsts = await Promise.all([delegate({ clientMessageId }), delegate({ clientMessageId }), delegate({ clientMessageId })]);
    expect(firsts.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(new Set(firsts.map((a) => a.body.collaborationId)).size).toBe(1);
    await respond(bob, firsts[0]?.body.collaborationId as string, "allow_once");
    const sends = await Promise.all([delegate({ clientMessageId }), delegate({ clientMessageId }), delegate({ clientMessageId })]);
    expect(sends.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(new Set(sends.map((a) => a.body.messageId)).size).toBe(1);
    expect(sends.filter((a) => a.body.duplicate === false)).toHaveLength(1);
  });

  it("an unanswered request expires after 10 minutes: through the sweep, and lazily", async () => {
    const swept = await requested({ clientMessageId: nextId() });
    ts.server.context.clock.advance(TEN_MINUTES + 1_000);
    await ts.server.context.maintenance.runAll();
    const expired = await replayUntil(
      ts,
      aliceBridge,
      (e) => e.type === "collaboration.expired" && e.data.collaborationId === swept.collaborationId,
    );
    expect(expired.data).toMatchObject({ clientMessageId: swept.clientMessageId, previousStatus: "requested" });
    const late = await delegate({ clientMessageId: swept.clientMessageId });
    expect(late.status).toBe(410);
    expect(late.body.error).toBe("collaboration_expired");
    expect((await respond(bob, swept.collaborationId, "allow_once")).body.error).toBe("collaboration_expired");

    // No sweep: the next call finds it expired by itself.
    const lazy = await requested({ clientMessageId: nextId() });
    ts.server.context.clock.advance(TEN_MINUTES + 1_000);
    expect((await delegate({ clientMessageId: lazy.clientMessageId })).status).toBe(410);
    const answered = await respond(bob, (await requested({ clientMessageId: nextId() })).collaborationId, "allow_once");
    expect(answered.status).toBe(200);
    // An allowed one the bridge never collects runs out too.
    ts.server.context.clock.advance(TEN_MINUTES + 1_000);
    expect((await delegate({ clientMessageId: answered.body.collaboration.clientMessageId })).body.error).toBe("collaboration_expired");
  });

  it("a withdrawn agent permission stops a waiting delegation; other people's bridges cannot take it over", async () => {
    const dave = await ts.addUser("dave");
    await grantAgentAccess(ts, alice, dave);
    await ok(ts, alice.apiKey, "POST", "/network/request", { to: dave.username });
    await ok(ts, dave.apiKey, "POST", "/network/request", { to: alice.username });
    const clientMessageId = nextId();
    const first = await requested({ clientMessageId, task: "Check the deploy" }, dave);
    expect((await respond(dave, first.collaborationId, "allow_once")).status).toBe(200);

    // carol's bridge with the same clientMessageId is carol's own request, refused for her: she has no access to bob.
    const fromCarol = await delegate({ clientMessageId }, carolBridge);
    expect(fromCarol.status).toBe(404);
    expect(fromCarol.body.error).toBe("person_not_found");
    expect((await ok<{ outgoing: Collaboration[] }>(ts, carol.apiKey, "GET", "/local-agent/collaborations")).outgoing).toEqual([]);

    await ok(ts, dave.apiKey, "DELETE", `/network/contacts/${alice.userId}/permissions`);
    const after = await delegate({ clientMessageId, target: dave.username, task: "Check the deploy" });
    // Still friends, so dave is found; but his agent is no longer open to alice.
    expect(after.status).toBe(403);
    expect(after.body.error).toBe("agent_permission_required");
  });

  it("records every change in the audit log", async () => {
    const actions = await ts.server.context.db
      .selectFrom("audit_log")
      .select("action")
      .where("object_type", "=", "collaboration")
      .distinct()
      .execute();
    expect(actions.map((a) => a.action).sort()).toEqual(
      ["collaboration.accept", "collaboration.decline", "collaboration.delegate", "collaboration.expire", "collaboration.request"].sort(),
    );
    const allowance = await ts.server.context.db
      .selectFrom("audit_log")
      .select("action")
      .where("object_type", "=", "collaboration_allowance")
      .orderBy("id")
      .execute();
    expect(allowance.map((a) => a.action)).toEqual(["collaboration_allowance.create", "collaboration_allowance.delete"]);
  });
});
