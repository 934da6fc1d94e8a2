import { afterEach, describe, expect, it } from "vitest";
import { agentPair, call, ok, storages } from "./delegation-fixture";
import { startTestServer, type TestServer } from "./harness";

interface Standing {
  balance: number | null;
  unlimited: boolean;
  monthlyAllowance: number | null;
  source: string;
}

/**
 * Credits on a self-hosted server: by default unlimited (a fresh install delegates at once), or
 * the operator's monthly allowance; a balance set with `tandem-server credits set` is honoured.
 */
describe.each(storages())("credits (%s)", (storage) => {
  let ts: TestServer | undefined;
  afterEach(async () => {
    await ts?.stop();
    ts = undefined;
  });

  /** alice's bridge delegates to bob; bob allows alice always, so each delegation goes straight out. */
  async function delegationSetup(server: TestServer) {
    const pair = await agentPair(server);
    let n = 0;
    const delegate = () =>
      call<{ status: string; collaborationId: string; error?: string }>(
        server,
        pair.aliceBridge.deviceToken,
        "POST",
        "/local-agent/delegations",
        {
          target: pair.bob.username,
          task: "Check the build",
          sessionHandle: pair.aliceBridge.sessionHandle,
          clientMessageId: `task-${++n}`,
        },
      );
    const first = await delegate();
    expect(first.status).toBe(202);
    await ok(server, pair.bob.apiKey, "POST", `/local-agent/collaborations/${first.body.collaborationId}/respond`, {
      decision: "always_allow",
    });
    const standing = () => ok<Standing>(server, pair.alice.apiKey, "GET", "/local-agent/credits");
    return { ...pair, delegate, first, standing };
  }

  it("a fresh server delegates out of the box: the default is unlimited", async () => {
    ts = await startTestServer({ maintenanceIntervalMs: 0 }, storage);
    const s = await delegationSetup(ts);
    expect(await s.standing()).toMatchObject({ balance: null, unlimited: true, source: "unlimited" });
    const delegated = await ok<{ status: string }>(
      ts,
      s.aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      {
        target: s.bob.username,
        task: "Check the build",
        sessionHandle: s.aliceBridge.sessionHandle,
        clientMessageId: "task-1",
      },
      [201],
    );
    expect(delegated.status).toBe("delegated");
    for (let i = 0; i < 3; i++) expect((await s.delegate()).status).toBe(201);

    // A balance the operator sets is honoured, unlimited default or not.
    const set = await ts.cli(["credits", "set", s.alice.username, "1"]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ balance: 1 });
    expect(await s.standing()).toMatchObject({ balance: 1, unlimited: false, source: "set" });
    expect((await s.delegate()).status).toBe(201);
    const refused = await s.delegate();
    expect([refused.status, refused.body.error]).toEqual([402, "insufficient_credits"]);
    const shown = await ts.cli(["credits", "show", s.alice.username]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ username: s.alice.username, balance: 0, source: "set" });
  });

  it("with a monthly allowance, each user has that many Credits a month", async () => {
    ts = await startTestServer({ maintenanceIntervalMs: 0, creditAllowance: 2 }, storage);
    const s = await delegationSetup(ts);
    expect(await s.standing()).toEqual({ success: true, balance: 2, unlimited: false, monthlyAllowance: 2, source: "allowance" });
    await ok(
      ts,
      s.aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      {
        target: s.bob.username,
        task: "Check the build",
        sessionHandle: s.aliceBridge.sessionHandle,
        clientMessageId: "task-1",
      },
      [201],
    );
    expect((await s.delegate()).status).toBe(201);
    expect(await s.standing()).toMatchObject({ balance: 0, monthlyAllowance: 2 });
    const refused = await s.delegate();
    expect([refused.status, refused.body.error]).toEqual([402, "insufficient_credits"]);
    // bob has spent nothing: his allowance is whole.
    expect(await ok<Standing>(ts, s.bob.apiKey, "GET", "/local-agent/credits")).toMatchObject({ balance: 2 });

    // The next month brings the allowance back.
    ts.server.context.clock.advance(32 * 24 * 60 * 60_000);
    await ok(ts, s.aliceBridge.deviceToken, "POST", `/local-agent/endpoints/${s.aliceBridge.endpointId}/heartbeat`, {});
    await ok(ts, s.bobBridge.deviceToken, "POST", `/local-agent/endpoints/${s.bobBridge.endpointId}/heartbeat`, {});
    expect(await s.standing()).toMatchObject({ balance: 2 });
    expect((await s.delegate()).status).toBe(201);
    expect(await s.standing()).toMatchObject({ balance: 1 });
  });
});
