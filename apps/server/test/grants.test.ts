import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endGrantsBetween } from "../src/delegation/grants";
import {
  type AgentPair,
  agentPair,
  call,
  ok,
  openGrant,
  pollEvents,
  registerBridge,
  StreamReader,
  storages,
  type WireGrant,
} from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

const MINUTE = 60_000;
const ROW_FIELDS = [
  "commSessionId",
  "communicationSessionId",
  "requesterPrincipalId",
  "requesterDeviceId",
  "requesterReplyEndpointId",
  "requesterReplySessionHandle",
  "recipientPrincipalId",
  "targetKind",
  "targetOfferId",
  "frozenEndpointId",
  "frozenSessionHandle",
  "status",
  "requestedAt",
  "requestExpiresAt",
  "activatedAt",
  "grantExpiresAt",
  "revokedAt",
];

describe.each(storages())("grants (%s)", (storage) => {
  let ts: TestServer;
  let counter = 0;

  // No timer: each expiry test either runs the sweep itself or relies on the lazy checks.
  beforeAll(async () => {
    ts = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
  });
  afterAll(() => ts.stop());

  /** alice has bob's agent permission; both have a bridge with a default route. */
  async function people(): Promise<AgentPair> {
    const n = ++counter;
    return agentPair(ts, { alice: `alice${n}`, bob: `bob${n}` });
  }

  const target = (user: TestUser) => ({ kind: "person_default_runtime", principalId: String(user.userId) });
  const request = (token: string, body: unknown) =>
    call<WireGrant & { error?: string; message?: string }>(ts, token, "POST", "/local-agent/grants", body);
  const action = (token: string, id: string, verb: string) =>
    call<WireGrant & { error?: string; message?: string }>(ts, token, "POST", `/local-agent/grants/${id}/${verb}`);
  const grantRow = async (id: string) =>
    await ts.server.context.db.selectFrom("grants").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

  it("a request answers 201 with the flat pending row, tells the recipient, and is listed for both parties", async () => {
    const { alice, bob, aliceBridge, bobBridge } = await people();
    const before = (await pollEvents(ts, bobBridge)).length;
    const response = await request(aliceBridge.deviceToken, { target: target(bob), requestedTtlMinutes: 15 });
    expect(response.status).toBe(201);
    const row = response.body;
    expect(Object.keys(row).sort()).toEqual([...ROW_FIELDS, "success"].sort());
    expect(row).toMatchObject({
      success: true,
      communicationSessionId: row.commSessionId,
      requesterPrincipalId: String(alice.userId),
      requesterDeviceId: aliceBridge.deviceId,
      requesterReplyEndpointId: aliceBridge.endpointId,
      requesterReplySessionHandle: aliceBridge.sessionHandle,
      recipientPrincipalId: String(bob.userId),
      targetKind: "person_default_runtime",
      targetOfferId: null,
      frozenEndpointId: null,
      frozenSessionHandle: null,
      status: "pending",
      activatedAt: null,
      grantExpiresAt: null,
      revokedAt: null,
    });
    expect(Date.parse(row.requestExpiresAt) - Date.parse(row.requestedAt)).toBe(10 * MINUTE);

    const events = (await pollEvents(ts, bobBridge)).slice(before);
    expect(events.map((e) => e.type)).toContain("grant.request");
    expect(events.find((e) => e.type === "grant.request")?.data).toMatchObject({
      communicationSessionId: row.commSessionId,
      status: "pending",
    });

    for (const token of [alice.apiKey, bob.apiKey, bobBridge.deviceToken]) {
      // A user key gets {success, grants}; a bridge's device token the bare array (bridge-wire.test.ts).
      const listed = await ok<{ grants: WireGrant[] } | WireGrant[]>(ts, token, "GET", "/local-agent/grants");
      const grants = Array.isArray(listed) ? listed : listed.grants;
      expect(Array.isArray(listed)).toBe(token === bobBridge.deviceToken);
      expect(grants.map((g) => g.commSessionId)).toEqual([row.commSessionId]);
      expect(await ok(ts, token, "GET", `/local-agent/grants/${row.commSessionId}`)).toMatchObject({ success: true, status: "pending" });
    }
    const stranger = await ts.addUser(`stranger${counter}`);
    expect((await ok<{ grants: unknown[] }>(ts, stranger.apiKey, "GET", "/local-agent/grants")).grants).toEqual([]);
    const hidden = await call(ts, stranger.apiKey, "GET", `/local-agent/grants/${row.commSessionId}`);
    expect(hidden.status).toBe(404);

    // A second request is listed first.
    const second = await ok<WireGrant>(ts, alice.apiKey, "POST", "/local-agent/grants", { target: target(bob) });
    const { grants } = await ok<{ grants: WireGrant[] }>(ts, alice.apiKey, "GET", "/local-agent/grants");
    expect(grants.map((g) => g.commSessionId)).toEqual([second.commSessionId, row.commSessionId]);
    // With a user key and no reply fields, the reply route is still the requester's default route.
    expect(second).toMatchObject({ requesterDeviceId: null, requesterReplyEndpointId: aliceBridge.endpointId });

    const audit = await ts.server.context.db.selectFrom("audit_log").selectAll().where("object_id", "=", row.commSessionId).execute();
    expect(audit.map((a) => a.action)).toEqual(["grant.request"]);
  });

  it("refuses bad requests with a clear code: no permission 403, unknown person 404, self, kind, ttl, reply fields 400", async () => {
    const { alice, bob, aliceBridge } = await people();
    // bob is connected to alice (he gave her agent access) but she never gave him hers.
    const noPermission = await request(bob.apiKey, { target: target(alice) });
    expect(noPermission.status).toBe(403);
    expect(noPermission.body.error).toBe("agent_permission_required");

    // Someone alice has no connection with at all: the same 403.
    const loner = await ts.addUser(`loner${counter}`);
    const unconnected = await request(alice.apiKey, { target: target(loner) });
    expect([unconnected.status, unconnected.body.error]).toEqual([403, "agent_permission_required"]);
    for (const principalId of ["999999999", "bob", "0"]) {
      const unknown = await request(alice.apiKey, { target: { kind: "person_default_runtime", principalId } });
      expect(unknown.status, principalId).toBe(404);
      expect(unknown.body.error).toBe("person_not_found");
    }
    const self = await request(alice.apiKey, { target: target(alice) });
    expect([self.status, self.body.error]).toEqual([400, "cannot_grant_self"]);
    const kind = await request(alice.apiKey, { target: { kind: "endpoint", principalId: String(bob.userId) } });
    expect([kind.status, kind.body.error]).toEqual([400, "unsupported_target_kind"]);

    for (const [body, field] of [
      [{ target: target(bob), requestedTtlMinutes: 0 }, "requestedTtlMinutes"],
      [{ target: target(bob), requestedTtlMinutes: "ten" }, "requestedTtlMinutes"],
      [{ target: { kind: "person_default_runtime" } }, "principalId"],
      [{}, "target"],
      [{ target: target(bob), replyEndpointId: aliceBridge.endpointId }, "replySessionHandle"],
    ] as const) {
      const bad = await request(alice.apiKey, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.message).toContain(field);
    }
    // Reply fields must name the requester's own open session.
    const foreign = await request(alice.apiKey, {
      target: target(bob),
      replyEndpointId: "ep_somebody_else",
      replySessionHandle: aliceBridge.sessionHandle,
    });
    expect(foreign.status).toBe(404);
    const readOnly = await ts.addUser(`reader${counter}`, ["os.team:read"]);
    const scoped = await request(readOnly.apiKey, { target: target(bob) });
    expect([scoped.status, (scoped.body as { error?: string }).error]).toEqual([403, "insufficient_scope"]);
    expect((await call(ts, null, "GET", "/local-agent/grants")).status).toBe(401);
  });

  it("accepting freezes the default route: later route changes never redirect the grant", async () => {
    const { alice, bob, aliceBridge, bobBridge } = await people();
    const aliceStream = StreamReader.open(ts, aliceBridge);
    const bobStream = StreamReader.open(ts, bobBridge);
    try {
      const grant = await openGrant(ts, aliceBridge.deviceToken, bob);
      expect(grant).toMatchObject({
        status: "active",
        frozenEndpointId: bobBridge.endpointId,
        frozenSessionHandle: bobBridge.sessionHandle,
      });
      expect(Date.parse(grant.grantExpiresAt as string) - Date.parse(grant.activatedAt as string)).toBe(30 * MINUTE);
      const expected = {
        communicationSessionId: grant.commSessionId,
        endpointId: bobBridge.endpointId,
        sessionHandle: bobBridge.sessionHandle,
        activatedAt: grant.activatedAt,
        grantExpiresAt: grant.grantExpiresAt,
      };
      expect((await bobStream.next("grant.activated")).data).toEqual(expected);
      expect((await aliceStream.next("grant.activated")).data).toEqual(expected);

      // bob moves his default route to another device; the grant stays where it was accepted.
      const desktop = await registerBridge(ts, bob, `bob${counter}-desktop`);
      const route = await ok<{ endpointId: string }>(ts, desktop.deviceToken, "GET", "/local-agent/default-route");
      expect(route.endpointId).toBe(desktop.endpointId);
      const sent = await ok<{ messageId: string }>(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", {
        communicationSessionId: grant.commSessionId,
        clientMessageId: "after-route-change",
        kind: "text",
        payload: { text: "still you" },
      });
      const dispatch = await bobStream.next("message.dispatch");
      expect(dispatch.endpointId).toBe(bobBridge.endpointId);
      expect(dispatch.data).toMatchObject({
        envelope: { id: sent.messageId, target: { endpointId: bobBridge.endpointId, sessionHandle: bobBridge.sessionHandle } },
      });
      expect((await pollEvents(ts, desktop)).filter((e) => e.type === "message.dispatch")).toEqual([]);
      expect((await ok<WireGrant>(ts, alice.apiKey, "GET", `/local-agent/grants/${grant.commSessionId}`)).frozenEndpointId).toBe(
        bobBridge.endpointId,
      );
    } finally {
      await aliceStream.close();
      await bobStream.close();
    }
  });

  it("caps the ttl at 30 minutes and honours a shorter one", async () => {
    const { bob, aliceBridge } = await people();
    for (const [requested, minutes] of [
      [500, 30],
      [30, 30],
      [5, 5],
      [undefined, 30],
    ] as const) {
      const grant = await openGrant(ts, aliceBridge.deviceToken, bob, requested === undefined ? {} : { requestedTtlMinutes: requested });
      expect(Date.parse(grant.grantExpiresAt as string) - Date.parse(grant.activatedAt as string), String(requested)).toBe(
        minutes * MINUTE,
      );
    }
  });

  it("only the recipient accepts or declines; answered grants cannot be answered again", async () => {
    const { alice, bob, aliceBridge } = await people();
    const pending = await ok<WireGrant>(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", { target: target(bob) });
    const stranger = await ts.addUser(`outsider${counter}`);
    for (const token of [alice.apiKey, aliceBridge.deviceToken, stranger.apiKey]) {
      expect((await action(token, pending.commSessionId, "accept")).status).toBe(404);
      expect((await action(token, pending.commSessionId, "decline")).status).toBe(404);
    }
    expect((await action(bob.apiKey, "cs_unknown", "accept")).status).toBe(404);

    const aliceEvents = (await pollEvents(ts, aliceBridge)).length;
    const declined = await action(bob.apiKey, pending.commSessionId, "decline");
    expect(declined.status).toBe(200);
    expect(declined.body).toMatchObject({ success: true, status: "declined", frozenEndpointId: null });
    const told = (await pollEvents(ts, aliceBridge)).slice(aliceEvents);
    expect(told.map((e) => e.type)).toEqual(["grant.declined"]);

    for (const verb of ["accept", "decline"]) {
      const again = await action(bob.apiKey, pending.commSessionId, verb);
      expect([again.status, again.body.error]).toEqual([409, "grant_not_pending"]);
      expect(again.body.message).toContain("declined");
    }
    const revoke = await action(alice.apiKey, pending.commSessionId, "revoke");
    expect([revoke.status, revoke.body.error]).toEqual([409, "grant_ended"]);
  });

  it("accept re-checks the agent permission: a request that outlived its permission cannot become active", async () => {
    const { alice, bob, aliceBridge } = await people();
    const pending = await ok<WireGrant>(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", { target: target(bob) });
    // The permission disappears without the withdrawal route (as when a request races it).
    await ts.server.context.db
      .deleteFrom("contact_permissions")
      .where("grantor_id", "=", bob.userId)
      .where("grantee_id", "=", alice.userId)
      .execute();
    const refused = await action(bob.apiKey, pending.commSessionId, "accept");
    expect([refused.status, refused.body.error]).toEqual([403, "agent_permission_required"]);
    expect((await grantRow(pending.commSessionId)).status).toBe("pending");
  });

  it("accept needs a reachable default route: none, offline, closed or not accepting inbound is a 409", async () => {
    const { alice, bob, bobBridge } = await people();
    const ask = async () => (await ok<WireGrant>(ts, alice.apiKey, "POST", "/local-agent/grants", { target: target(bob) })).commSessionId;
    const patch = (body: unknown) => ok(ts, bobBridge.deviceToken, "PATCH", `/local-agent/sessions/${bobBridge.sessionHandle}`, body);

    await patch({ allowInbound: false });
    let refused = await action(bob.apiKey, await ask(), "accept");
    expect([refused.status, refused.body.error]).toEqual([409, "default_route_unavailable"]);
    await patch({ allowInbound: true, state: "closed" });
    refused = await action(bob.apiKey, await ask(), "accept");
    expect([refused.status, refused.body.error]).toEqual([409, "default_route_unavailable"]);

    await ok(ts, bobBridge.deviceToken, "DELETE", "/local-agent/default-route");
    const id = await ask();
    refused = await action(bob.apiKey, id, "accept");
    expect([refused.status, refused.body.error]).toEqual([409, "no_default_route"]);
    // A refused accept leaves the request pending.
    expect((await grantRow(id)).status).toBe("pending");

    // A fresh bridge, then silence for longer than the presence timeout.
    await registerBridge(ts, bob, `bob${counter}-quiet`);
    ts.server.context.clock.advance(61_000);
    refused = await action(bob.apiKey, id, "accept");
    expect([refused.status, refused.body.error]).toEqual([409, "default_route_offline"]);
  });

  it("either party revokes; messages are refused afterwards, queued deliveries are revoked, both sides hear it", async () => {
    for (const revoker of ["requester", "recipient"] as const) {
      const { alice, bob, aliceBridge, bobBridge } = await people();
      const grant = await openGrant(ts, aliceBridge.deviceToken, bob);
      const send = (clientMessageId: string) =>
        call<{ messageId: string; error?: string }>(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", {
          communicationSessionId: grant.commSessionId,
          clientMessageId,
          kind: "text",
          payload: { text: clientMessageId },
        });
      const queued = (await send("before")).body.messageId;
      const cursors = { alice: (await pollEvents(ts, aliceBridge)).length, bob: (await pollEvents(ts, bobBridge)).at(-1)?.cursor ?? "0" };

      const token = revoker === "requester" ? alice.apiKey : bobBridge.deviceToken;
      const revoked = await action(token, grant.commSessionId, "revoke");
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ status: "revoked", revokedAt: expect.any(String) });

      const refused = await send("after");
      expect([refused.status, refused.body.error]).toEqual([409, "communication_session_revoked"]);
      const status = await ok<{ delivery: { status: string; terminalAt: string } }>(
        ts,
        alice.apiKey,
        "GET",
        `/local-agent/messages/${queued}`,
      );
      expect(status.delivery).toMatchObject({ status: "revoked", terminalAt: expect.any(String) });

      expect((await pollEvents(ts, aliceBridge)).slice(cursors.alice).map((e) => e.type)).toContain("grant.revoked");
      expect((await pollEvents(ts, bobBridge, cursors.bob)).map((e) => e.type)).toContain("grant.revoked");

      // Revoking again answers the same revoked row.
      const again = await action(bob.apiKey, grant.commSessionId, "revoke");
      expect(again.status).toBe(200);
      expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
      const audit = await ts.server.context.db
        .selectFrom("audit_log")
        .select("action")
        .where("object_id", "=", grant.commSessionId)
        .execute();
      expect(audit.map((a) => a.action)).toEqual(["grant.request", "grant.accept", "grant.revoke"]);
    }
  });

  it("a pending request can be revoked by its requester", async () => {
    const { alice, bob } = await people();
    const pending = await ok<WireGrant>(ts, alice.apiKey, "POST", "/local-agent/grants", { target: target(bob) });
    expect((await action(alice.apiKey, pending.commSessionId, "revoke")).body).toMatchObject({ status: "revoked" });
    const accept = await action(bob.apiKey, pending.commSessionId, "accept");
    expect([accept.status, accept.body.error]).toEqual([409, "grant_not_pending"]);
  });

  it("expires an unanswered request after 10 minutes by the sweep, with an event and no request needed", async () => {
    const { bob, aliceBridge } = await people();
    const pending = await ok<WireGrant>(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", { target: target(bob) });
    const stream = StreamReader.open(ts, aliceBridge);
    try {
      ts.server.context.clock.advance(9 * MINUTE);
      await ts.server.context.maintenance.runAll();
      expect((await grantRow(pending.commSessionId)).status).toBe("pending");
      ts.server.context.clock.advance(MINUTE + 1);
      await ts.server.context.maintenance.runAll();
      expect(await grantRow(pending.commSessionId)).toMatchObject({ status: "expired", ended_at: expect.any(String) });
      expect((await stream.next("grant.expired")).data).toMatchObject({ communicationSessionId: pending.commSessionId, status: "expired" });
    } finally {
      await stream.close();
    }
    const late = await action(bob.apiKey, pending.commSessionId, "accept");
    expect([late.status, late.body.error]).toEqual([409, "grant_expired"]);
  });

  it("expires an unanswered request lazily: without the sweep, the next read or accept records it", async () => {
    const { alice, bob, aliceBridge } = await people();
    const listed = await ok<WireGrant>(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", { target: target(bob) });
    const accepted = await ok<WireGrant>(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", { target: target(bob) });
    ts.server.context.clock.advance(10 * MINUTE + 1);
    expect((await grantRow(listed.commSessionId)).status).toBe("pending");
    const { grants } = await ok<{ grants: WireGrant[] }>(ts, alice.apiKey, "GET", "/local-agent/grants");
    expect(grants.find((g) => g.commSessionId === listed.commSessionId)?.status).toBe("expired");
    expect((await grantRow(listed.commSessionId)).status).toBe("expired");

    const late = await action(bob.apiKey, accepted.commSessionId, "accept");
    expect([late.status, late.body.error]).toEqual([409, "grant_expired"]);
    expect((await grantRow(accepted.commSessionId)).status).toBe("expired");
    const audit = await ts.server.context.db.selectFrom("audit_log").selectAll().where("object_id", "=", accepted.commSessionId).execute();
    expect(audit.map((a) => [a.action, a.actor_credential])).toContainEqual(["grant.expire", "system"]);
  });

  it("expires an active grant after its ttl by the sweep: its open deliveries expire, both sides hear it", async () => {
    const { alice, bob, aliceBridge, bobBridge } = await people();
    const grant = await openGrant(ts, aliceBridge.deviceToken, bob, { requestedTtlMinutes: 2 });
    const sent = await ok<{ messageId: string }>(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", {
      communicationSessionId: grant.commSessionId,
      body: "quick question",
    });
    const bobCursor = (await pollEvents(ts, bobBridge)).at(-1)?.cursor ?? "0";
    ts.server.context.clock.advance(2 * MINUTE - 1000);
    await ts.server.context.maintenance.runAll();
    expect((await grantRow(grant.commSessionId)).status).toBe("active");
    ts.server.context.clock.advance(1001);
    await ts.server.context.maintenance.runAll();
    expect((await grantRow(grant.commSessionId)).status).toBe("expired");
    const message = await ts.server.context.db
      .selectFrom("messages")
      .selectAll()
      .where("id", "=", sent.messageId)
      .executeTakeFirstOrThrow();
    expect(message).toMatchObject({ status: "expired", terminal_at: expect.any(String) });
    expect((await pollEvents(ts, bobBridge, bobCursor)).map((e) => e.type)).toContain("grant.expired");
    expect((await pollEvents(ts, aliceBridge)).map((e) => e.type)).toContain("grant.expired");
    const refused = await call(ts, alice.apiKey, "POST", "/local-agent/messages", { commSessionId: grant.commSessionId, body: "again?" });
    expect([refused.status, (refused.body as { error: string }).error]).toEqual([409, "communication_session_expired"]);
  });

  it("expires an active grant lazily: a send after the ttl is refused and the delivery reads expired", async () => {
    const { alice, bob, aliceBridge } = await people();
    const grant = await openGrant(ts, aliceBridge.deviceToken, bob, { requestedTtlMinutes: 1 });
    const sent = await ok<{ messageId: string }>(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", {
      communicationSessionId: grant.commSessionId,
      body: "hello",
    });
    ts.server.context.clock.advance(MINUTE);
    const refused = await call(ts, aliceBridge.deviceToken, "POST", "/local-agent/messages", {
      communicationSessionId: grant.commSessionId,
      body: "too late",
    });
    expect([refused.status, (refused.body as { error: string }).error]).toEqual([409, "communication_session_expired"]);
    expect((await grantRow(grant.commSessionId)).status).toBe("expired");
    const status = await ok<{ delivery: { status: string } }>(ts, alice.apiKey, "GET", `/local-agent/messages/${sent.messageId}`);
    expect(status.delivery.status).toBe("expired");
    const revoke = await action(alice.apiKey, grant.commSessionId, "revoke");
    expect([revoke.status, revoke.body.error]).toEqual([409, "grant_ended"]);
  });

  it("endGrantsBetween revokes the pending and active grants from one person to another, and only those", async () => {
    const { alice, bob, aliceBridge } = await people();
    const active = await openGrant(ts, aliceBridge.deviceToken, bob);
    const pending = await ok<WireGrant>(ts, alice.apiKey, "POST", "/local-agent/grants", { target: target(bob) });
    const declined = await ok<WireGrant>(ts, alice.apiKey, "POST", "/local-agent/grants", { target: target(bob) });
    await ok(ts, bob.apiKey, "POST", `/local-agent/grants/${declined.commSessionId}/decline`);
    const revoked = await endGrantsBetween(ts.server.context, { requesterId: alice.userId, recipientId: bob.userId }, "system");
    expect(revoked.sort()).toEqual([active.commSessionId, pending.commSessionId].sort());
    expect((await grantRow(active.commSessionId)).status).toBe("revoked");
    expect((await grantRow(pending.commSessionId)).status).toBe("revoked");
    expect((await grantRow(declined.commSessionId)).status).toBe("declined");
    expect(await endGrantsBetween(ts.server.context, { requesterId: bob.userId, recipientId: alice.userId }, "system")).toEqual([]);
  });
});
