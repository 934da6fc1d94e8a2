import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setCreditBalance } from "../src/delegation/grants/credits";
import { agentPair, type Bridge, call, grantAgentAccess, heartbeat, ok, storages, type WireGrant } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/**
 * Races between withdrawing agent access and what rests on it (issue #10, points 6 and 9): a
 * delegation or a grant accept that runs at the same moment as `DELETE
 * /network/contacts/{id}/permissions` must either finish before the withdrawal (which then ends
 * its grant) or see the permission gone; never leave an active grant behind, and never fail with
 * a 500 (PostgreSQL deadlocks included).
 */

const ITERATIONS = 15;

describe.each(storages("delegation races"))("withdrawal races (%s)", (storage) => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let aliceBridge: Bridge;
  let bobBridge: Bridge;
  let counter = 0;

  beforeAll(async () => {
    ts = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
    ({ alice, bob, aliceBridge, bobBridge } = await agentPair(ts));
    const { db, clock } = ts.server.context;
    await db.transaction().execute((tx) => setCreditBalance(tx, clock, alice.userId, 10_000, "system"));
    // bob always allows alice's delegations, so each call goes straight to opening a grant.
    const first = await call<{ collaborationId: string }>(ts, aliceBridge.deviceToken, "POST", "/local-agent/delegations", {
      target: bob.username,
      task: "warm up",
      sessionHandle: aliceBridge.sessionHandle,
      clientMessageId: "race-warmup",
    });
    await ok(ts, bob.apiKey, "POST", `/local-agent/collaborations/${first.body.collaborationId}/respond`, { decision: "always_allow" });
    await ok(ts, bob.apiKey, "DELETE", `/network/contacts/${alice.userId}/permissions`);
  }, 60_000);
  afterAll(() => ts?.stop());

  /** Active grants from alice to bob, read from storage. */
  const activeGrants = () =>
    ts.server.context.db
      .selectFrom("grants")
      .select("id")
      .where("requester_id", "=", alice.userId)
      .where("recipient_id", "=", bob.userId)
      .where("status", "=", "active")
      .execute();

  const withdraw = () => call(ts, bob.apiKey, "DELETE", `/network/contacts/${alice.userId}/permissions`);

  it("a delegation racing the withdrawal never leaves an active grant or an injectable task invite", async () => {
    const invites: { messageId: string; communicationSessionId: string }[] = [];
    const statuses = new Set<number>();
    for (let i = 0; i < ITERATIONS; i++) {
      await grantAgentAccess(ts, alice, bob);
      await heartbeat(ts, bobBridge);
      const delegations = [0, 1, 2, 3, 4].map(() =>
        call<{ status: string; messageId?: string; communicationSessionId?: string }>(
          ts,
          aliceBridge.deviceToken,
          "POST",
          "/local-agent/delegations",
          { target: bob.username, task: `task ${++counter}`, sessionHandle: aliceBridge.sessionHandle, clientMessageId: `race-${counter}` },
        ),
      );
      // The withdrawal lands at varying points of the delegations' work.
      const withdrawal = new Promise<Awaited<ReturnType<typeof withdraw>>>((resolve) => setTimeout(() => resolve(withdraw()), i % 6));
      const [withdrawn, ...answers] = await Promise.all([withdrawal, ...delegations]);
      expect(withdrawn.status).toBe(200);
      for (const answer of answers) {
        statuses.add(answer.status);
        expect([201, 403, 404]).toContain(answer.status);
        if (answer.status === 201) {
          invites.push({
            messageId: answer.body.messageId as string,
            communicationSessionId: answer.body.communicationSessionId as string,
          });
        }
      }
      expect(await activeGrants()).toEqual([]);
    }
    // Every task invite that went out is refused at injection: its grant ended with the permission.
    for (const invite of invites) {
      const verdict = await ok<{ valid: boolean }>(ts, bobBridge.deviceToken, "POST", "/local-agent/injections/validate", {
        ...invite,
        endpointId: bobBridge.endpointId,
      });
      expect(verdict.valid).toBe(false);
    }
    expect([...statuses].some((s) => s !== 201)).toBe(true);
  }, 60_000);

  it("injection validation refuses an invite whose permission is gone, even if its grant were still active", async () => {
    await grantAgentAccess(ts, alice, bob);
    await heartbeat(ts, bobBridge);
    const sent = await ok<{ messageId: string; communicationSessionId: string }>(
      ts,
      aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      { target: bob.username, task: "check me", sessionHandle: aliceBridge.sessionHandle, clientMessageId: `race-${++counter}` },
    );
    const body = { ...sent, endpointId: bobBridge.endpointId };
    expect((await ok<{ valid: boolean }>(ts, bobBridge.deviceToken, "POST", "/local-agent/injections/validate", body)).valid).toBe(true);
    // The permission disappears without the withdrawal route (as when a delegation raced it).
    await ts.server.context.db
      .deleteFrom("contact_permissions")
      .where("grantor_id", "=", bob.userId)
      .where("grantee_id", "=", alice.userId)
      .execute();
    const verdict = await ok<{ valid: boolean; reason?: string }>(
      ts,
      bobBridge.deviceToken,
      "POST",
      "/local-agent/injections/validate",
      body,
    );
    expect(verdict).toMatchObject({ valid: false, reason: "communication_session_revoked" });
    await ts.server.context.db.updateTable("grants").set({ status: "revoked" }).where("id", "=", sent.communicationSessionId).execute();
  });

  it("a grant request racing the withdrawal never stays pending after it", async () => {
    for (let i = 0; i < ITERATIONS; i++) {
      await grantAgentAccess(ts, alice, bob);
      const request = () =>
        call(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", {
          target: { kind: "person_default_runtime", principalId: String(bob.userId) },
        });
      const withdrawal = new Promise<Awaited<ReturnType<typeof withdraw>>>((resolve) => setTimeout(() => resolve(withdraw()), i % 4));
      const [withdrawn, ...answers] = await Promise.all([withdrawal, request(), request(), request()]);
      expect(withdrawn.status).toBe(200);
      for (const answer of answers) expect([201, 403, 404]).toContain(answer.status);
      const open = await ts.server.context.db
        .selectFrom("grants")
        .select("id")
        .where("requester_id", "=", alice.userId)
        .where("recipient_id", "=", bob.userId)
        .where("status", "in", ["pending", "active"])
        .execute();
      expect(open).toEqual([]);
    }
  }, 60_000);

  it("a grant accept racing the withdrawal never fails with a 500 and never stays active", async () => {
    const outcomes = new Set<number>();
    for (let i = 0; i < ITERATIONS; i++) {
      await grantAgentAccess(ts, alice, bob);
      await heartbeat(ts, bobBridge);
      const requested = await ok<WireGrant>(ts, aliceBridge.deviceToken, "POST", "/local-agent/grants", {
        target: { kind: "person_default_runtime", principalId: String(bob.userId) },
      });
      const [accepted, withdrawn] = await Promise.all([
        call(ts, bob.apiKey, "POST", `/local-agent/grants/${requested.commSessionId}/accept`),
        withdraw(),
      ]);
      expect(withdrawn.status).toBe(200);
      // Accepted before the withdrawal (which then revoked it), or refused after it.
      expect([200, 403, 409]).toContain(accepted.status);
      outcomes.add(accepted.status);
      expect(await activeGrants()).toEqual([]);
    }
    expect(outcomes.size).toBeGreaterThan(0);
  }, 60_000);
});
