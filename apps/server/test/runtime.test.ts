import { createHash } from "node:crypto";
import { TandemClient } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, call, grantAgentAccess, ok, registerBridge, StreamReader, storages } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

interface EndpointBody {
  endpointId: string;
  principalId: string;
  deviceId: string;
  runtime: string;
  presence: "online" | "offline";
  lastSeenAt: string | null;
  bridgeVersion: string | null;
  capabilities: unknown;
  label: string | null;
  revokedAt: string | null;
}
interface Registered {
  success: true;
  endpoint: EndpointBody;
  deviceToken: string;
}

const PRESENCE_TIMEOUT_MS = 60_000;

describe.each(storages("runtime suite"))("runtime endpoints, sessions and default route on %s", (storage) => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  const register = (user: TestUser, deviceId: string, extra: Record<string, unknown> = {}) =>
    call<Registered>(ts, user.apiKey, "POST", "/local-agent/endpoints", {
      runtime: "claude-code",
      deviceId,
      bridgeVersion: "1.2.3",
      adapterVersion: "0.9.0",
      capabilities: ["task_invite", "text"],
      ...extra,
    });
  const auditActions = async (objectId: string) =>
    (await ts.server.context.db.selectFrom("audit_log").select("action").where("object_id", "=", objectId).orderBy("id").execute()).map(
      (row) => row.action,
    );

  beforeAll(async () => {
    ts = await startTestServer({}, storage);
    alice = await ts.addUser("alice");
    bob = await ts.addUser("bob");
    carol = await ts.addUser("carol");
  });
  afterAll(() => ts.stop());

  describe("registration", () => {
    it("answers 201 with the endpoint and a device token shown once and stored only as a hash", async () => {
      const response = await register(alice, "alice-laptop", { label: "Laptop" });
      expect(response.status).toBe(201);
      const { endpoint, deviceToken } = response.body;
      expect(deviceToken).toMatch(/^svc_dev_[0-9A-Za-z]{44}$/);
      expect(endpoint).toMatchObject({
        principalId: String(alice.userId),
        deviceId: "alice-laptop",
        runtime: "claude-code",
        presence: "online",
        bridgeVersion: "1.2.3",
        adapterVersion: "0.9.0",
        capabilities: ["task_invite", "text"],
        label: "Laptop",
        revokedAt: null,
      });
      expect(endpoint.endpointId).toMatch(/^ep_/);
      expect(endpoint.lastSeenAt).not.toBeNull();

      const row = await ts.server.context.db
        .selectFrom("runtime_endpoints")
        .selectAll()
        .where("id", "=", endpoint.endpointId)
        .executeTakeFirstOrThrow();
      expect(Object.values(row).map(String)).not.toContain(deviceToken);
      const secret = deviceToken.slice("svc_dev_".length + 12);
      expect(row.token_hash).toBe(createHash("sha256").update(secret).digest("hex"));

      const listed = await ok<{ endpoints: Record<string, unknown>[] }>(ts, alice.apiKey, "GET", "/local-agent/endpoints");
      expect(listed.endpoints.map((e) => e.endpointId)).toContain(endpoint.endpointId);
      expect(JSON.stringify(listed)).not.toContain(deviceToken);
      expect(JSON.stringify(listed)).not.toContain("token");

      const who = await ok(ts, deviceToken, "GET", "/local-agent/whoami");
      expect(who).toEqual({
        success: true,
        principalId: String(alice.userId),
        userId: alice.userId,
        username: "alice",
        credentialKind: "device",
        deviceId: "alice-laptop",
        endpointId: endpoint.endpointId,
      });
      expect(await auditActions(endpoint.endpointId)).toEqual(["endpoint.register"]);
    });

    it("accepts capabilities as an object, and omitted optional fields", async () => {
      const response = await call<Registered>(ts, alice.apiKey, "POST", "/local-agent/endpoints", {
        runtime: "codex",
        deviceId: "alice-desktop",
        capabilities: { steer: true, kinds: ["text"] },
      });
      expect(response.status).toBe(201);
      expect(response.body.endpoint).toMatchObject({ runtime: "codex", capabilities: { steer: true, kinds: ["text"] }, label: null });
      const bare = await call<Registered>(ts, alice.apiKey, "POST", "/local-agent/endpoints", { runtime: "codex", deviceId: "alice-bare" });
      expect(bare.status).toBe(201);
      expect(bare.body.endpoint.capabilities).toEqual([]);
    });

    it.each([
      [{ runtime: "gpt", deviceId: "d" }, "invalid_runtime", "runtime"],
      [{ deviceId: "d" }, "invalid_request", "body.runtime"],
      [{ runtime: "codex" }, "invalid_request", "body.deviceId"],
      [{ runtime: "codex", deviceId: "" }, "invalid_request", "body.deviceId"],
      [{ runtime: "codex", deviceId: "x".repeat(201) }, "invalid_request", "body.deviceId"],
      [{ runtime: "codex", deviceId: "d", capabilities: "text" }, "invalid_request", "body.capabilities"],
      [{ runtime: "codex", deviceId: "d", capabilities: [1, 2] }, "invalid_request", "body.capabilities"],
      [{ runtime: "codex", deviceId: "d", capabilities: { big: "x".repeat(9000) } }, "invalid_request", "8192 bytes"],
    ])("refuses %j with 400 %s", async (body, code, named) => {
      const response = await call(ts, alice.apiKey, "POST", "/local-agent/endpoints", body);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ success: false, error: code });
      expect(String(response.body.message)).toContain(named);
    });

    it("needs a user key with os.team:write (a device token re-registers only its own device)", async () => {
      expect((await call(ts, null, "POST", "/local-agent/endpoints", { runtime: "codex", deviceId: "x" })).status).toBe(401);
      expect((await call(ts, "svc_sk_nonsense", "POST", "/local-agent/endpoints", { runtime: "codex", deviceId: "x" })).status).toBe(401);
      const reader = await ts.addUser("reader", ["os.team:read"]);
      const refused = await call(ts, reader.apiKey, "POST", "/local-agent/endpoints", { runtime: "codex", deviceId: "x" });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe("insufficient_scope");
      const device = (await register(alice, "scope-check")).body.deviceToken;
      const byDevice = await call(ts, device, "POST", "/local-agent/endpoints", { runtime: "codex", deviceId: "x" });
      expect(byDevice.status).toBe(403);
      expect(byDevice.body.error).toBe("device_mismatch");
    });

    it("rotates the token when the same device registers again: same endpoint, old token refused at once", async () => {
      const first = await register(bob, "bob-laptop");
      const second = await register(bob, "bob-laptop", { bridgeVersion: "2.0.0" });
      expect(second.status).toBe(200);
      expect(second.body.endpoint.endpointId).toBe(first.body.endpoint.endpointId);
      expect(second.body.endpoint.bridgeVersion).toBe("2.0.0");
      expect(second.body.deviceToken).not.toBe(first.body.deviceToken);
      const old = await call(ts, first.body.deviceToken, "GET", "/local-agent/whoami");
      expect(old.status).toBe(401);
      expect(old.body.error).toBe("invalid_credential");
      expect((await call(ts, second.body.deviceToken, "GET", "/local-agent/whoami")).status).toBe(200);
      expect(await auditActions(first.body.endpoint.endpointId)).toEqual(["endpoint.register", "endpoint.rotate"]);

      // Device ids are per owner: carol's "bob-laptop" is her own endpoint.
      const carols = await register(carol, "bob-laptop");
      expect(carols.status).toBe(201);
      expect(carols.body.endpoint.endpointId).not.toBe(first.body.endpoint.endpointId);
    });

    it("gives concurrent registrations of one new device a single endpoint", async () => {
      const responses = await Promise.all([1, 2, 3, 4].map(() => register(carol, "carol-race")));
      const ids = new Set(responses.map((r) => r.body.endpoint.endpointId));
      expect(ids.size).toBe(1);
      expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
      const valid = await Promise.all(responses.map((r) => call(ts, r.body.deviceToken, "GET", "/local-agent/whoami")));
      // Only the last rotation's token verifies.
      expect(valid.filter((r) => r.status === 200)).toHaveLength(1);
    });
  });

  describe("heartbeat and presence", () => {
    it("goes offline after 60 s without a heartbeat and back online with one", async () => {
      const { body } = await register(carol, "carol-heartbeat");
      const { endpointId } = body.endpoint;
      const presence = async () =>
        (await ok<{ endpoints: EndpointBody[] }>(ts, carol.apiKey, "GET", "/local-agent/endpoints")).endpoints.find(
          (e) => e.endpointId === endpointId,
        )?.presence;
      expect(await presence()).toBe("online");
      ts.server.context.clock.advance(PRESENCE_TIMEOUT_MS + 1_000);
      expect(await presence()).toBe("offline");
      const beat = await ok(ts, body.deviceToken, "POST", `/local-agent/endpoints/${endpointId}/heartbeat`);
      expect(beat).toMatchObject({ success: true, endpointId, presence: "online" });
      expect(Date.parse(String(beat.lastSeenAt))).toBeGreaterThan(Date.parse(String(body.endpoint.lastSeenAt)) + PRESENCE_TIMEOUT_MS);
      expect(await presence()).toBe("online");
    });

    it("accepts a heartbeat only from the endpoint's own device token", async () => {
      const mine = (await register(carol, "carol-hb-a")).body;
      const other = (await register(carol, "carol-hb-b")).body;
      const foreign = await call(ts, mine.deviceToken, "POST", `/local-agent/endpoints/${other.endpoint.endpointId}/heartbeat`);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toBe("endpoint_not_found");
      const byKey = await call(ts, carol.apiKey, "POST", `/local-agent/endpoints/${mine.endpoint.endpointId}/heartbeat`);
      expect(byKey.status).toBe(403);
      expect((await call(ts, null, "POST", `/local-agent/endpoints/${mine.endpoint.endpointId}/heartbeat`)).status).toBe(401);
    });
  });

  describe("sessions", () => {
    let bridge: Bridge;
    let other: Bridge;

    beforeAll(async () => {
      bridge = await registerBridge(ts, alice, "alice-sessions");
      other = await registerBridge(ts, bob, "bob-sessions");
    });

    it("registers a session with a server-made handle and the wire fields", async () => {
      const response = await call<{ sessionHandle: string; session: Record<string, unknown> }>(
        ts,
        bridge.deviceToken,
        "POST",
        "/local-agent/sessions",
        {
          endpointId: bridge.endpointId,
          label: "Refactor",
          state: "busy",
          deliveryMode: "managed_stream",
          capabilities: ["text"],
          allowInbound: true,
          allowMidTurnSteer: true,
          workspaceBoundary: "/home/alice/project",
        },
      );
      expect(response.status).toBe(201);
      expect(response.body.sessionHandle).toMatch(/^sess_/);
      expect(response.body.session).toEqual({
        sessionHandle: response.body.sessionHandle,
        endpointId: bridge.endpointId,
        label: "Refactor",
        state: "busy",
        deliveryMode: "managed_stream",
        capabilities: ["text"],
        allowInbound: true,
        allowMidTurnSteer: true,
        workspaceBoundary: "/home/alice/project",
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    });

    it("treats a repeated handle of the same endpoint as an update; handles are per endpoint", async () => {
      const body = { endpointId: bridge.endpointId, handle: "h-42", state: "idle", allowInbound: false };
      const first = await call(ts, bridge.deviceToken, "POST", "/local-agent/sessions", body);
      expect(first.status).toBe(201);
      const again = await call<{ session: { allowInbound: boolean; state: string } }>(
        ts,
        bridge.deviceToken,
        "POST",
        "/local-agent/sessions",
        {
          ...body,
          allowInbound: true,
        },
      );
      expect(again.status).toBe(200);
      expect(again.body.session).toMatchObject({ allowInbound: true, state: "idle" });
      // Issue #10, point 18: another user's device cannot squat the handle or learn it exists:
      // the same handle on its own endpoint is its own session.
      const mine = await call<{ session: { endpointId: string; allowInbound: boolean } }>(
        ts,
        other.deviceToken,
        "POST",
        "/local-agent/sessions",
        {
          handle: "h-42",
          state: "busy",
          allowInbound: false,
        },
      );
      expect(mine.status).toBe(201);
      expect(mine.body.session).toMatchObject({ endpointId: other.endpointId, allowInbound: false });
      const patched = await call(ts, other.deviceToken, "PATCH", "/local-agent/sessions/h-42", { state: "closed" });
      expect(patched.status).toBe(200);
      // The bridge's own session is untouched by any of it, and it can still re-announce it.
      const own = await call<{ session: { state: string; allowInbound: boolean } }>(
        ts,
        bridge.deviceToken,
        "POST",
        "/local-agent/sessions",
        {
          ...body,
          allowInbound: true,
        },
      );
      expect(own.status).toBe(200);
      expect(own.body.session).toMatchObject({ state: "idle", allowInbound: true });
      // A squatter arriving first does not block the bridge either.
      const early = await call(ts, other.deviceToken, "POST", "/local-agent/sessions", {
        handle: "claude-managed-1",
        state: "idle",
        allowInbound: true,
      });
      expect(early.status).toBe(201);
      const late = await call(ts, bridge.deviceToken, "POST", "/local-agent/sessions", {
        handle: "claude-managed-1",
        state: "idle",
        allowInbound: true,
      });
      expect(late.status).toBe(201);
      expect(await auditActions("h-42")).toEqual([
        "session.register",
        "session.update",
        "session.register",
        "session.update",
        "session.update",
      ]);
    });

    it("refuses a session for another endpoint and bad fields", async () => {
      const foreign = await call(ts, bridge.deviceToken, "POST", "/local-agent/sessions", { endpointId: other.endpointId });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toBe("endpoint_not_found");
      for (const [body, field] of [
        [{ state: "closed" }, "body.state"],
        [{ deliveryMode: "poll" }, "body.deliveryMode"],
        [{ handle: "has space" }, "body.handle"],
        [{ allowInbound: "yes" }, "body.allowInbound"],
      ] as const) {
        const response = await call(ts, bridge.deviceToken, "POST", "/local-agent/sessions", body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        expect(String(response.body.message)).toContain(field);
      }
      expect((await call(ts, alice.apiKey, "POST", "/local-agent/sessions", {})).status).toBe(403);
    });

    it("patches state and flags; another endpoint's session is a 404", async () => {
      const patched = await ok<{ session: Record<string, unknown> }>(
        ts,
        bridge.deviceToken,
        "PATCH",
        `/local-agent/sessions/${bridge.sessionHandle}`,
        {
          state: "busy",
          allowInbound: false,
          label: "renamed",
        },
      );
      expect(patched.session).toMatchObject({ state: "busy", allowInbound: false, label: "renamed", sessionHandle: bridge.sessionHandle });
      const untouched = await ok<{ session: Record<string, unknown> }>(
        ts,
        bridge.deviceToken,
        "PATCH",
        `/local-agent/sessions/${bridge.sessionHandle}`,
        {
          allowInbound: true,
        },
      );
      expect(untouched.session).toMatchObject({ state: "busy", allowInbound: true, label: "renamed" });
      const foreign = await call(ts, other.deviceToken, "PATCH", `/local-agent/sessions/${bridge.sessionHandle}`, { state: "closed" });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toBe("session_not_found");
      const unknown = await call(ts, bridge.deviceToken, "PATCH", "/local-agent/sessions/nope", { state: "idle" });
      expect(unknown.status).toBe(404);
      const bad = await call(ts, bridge.deviceToken, "PATCH", `/local-agent/sessions/${bridge.sessionHandle}`, { state: "sleeping" });
      expect(bad.status).toBe(400);
      expect(String(bad.body.message)).toContain("body.state");
    });
  });

  describe("default route", () => {
    it("is set by the bridge (registerBridge), read by device and owner, and cleared", async () => {
      const bridge = await registerBridge(ts, carol, "carol-route");
      const route = await ok(ts, carol.apiKey, "GET", "/local-agent/default-route");
      expect(route).toEqual({
        success: true,
        endpointId: bridge.endpointId,
        sessionHandle: bridge.sessionHandle,
        updatedAt: expect.any(String),
      });
      expect(await ok(ts, bridge.deviceToken, "GET", "/local-agent/default-route")).toEqual(route);
      expect(await ok(ts, carol.apiKey, "DELETE", "/local-agent/default-route")).toEqual({ success: true, cleared: true });
      const none = await call(ts, carol.apiKey, "GET", "/local-agent/default-route");
      expect(none.status).toBe(404);
      expect(none.body).toMatchObject({ success: false, error: "no_default_route" });
      expect(await ok(ts, carol.apiKey, "DELETE", "/local-agent/default-route")).toEqual({ success: true, cleared: false });

      // The owner's key may point the route at any of the owner's endpoints.
      const set = await ok(ts, carol.apiKey, "PUT", "/local-agent/default-route", {
        endpointId: bridge.endpointId,
        sessionHandle: bridge.sessionHandle,
      });
      expect(set).toMatchObject({ endpointId: bridge.endpointId, sessionHandle: bridge.sessionHandle });
      const actions = (
        await ts.server.context.db
          .selectFrom("audit_log")
          .select("action")
          .where("object_type", "=", "default_route")
          .where("party_a", "=", carol.userId)
          .execute()
      ).map((r) => r.action);
      expect(actions).toEqual(["default_route.set", "default_route.clear", "default_route.set"]);
    });

    it("refuses another endpoint's session, a closed session, and endpoints the credential may not name", async () => {
      const a = await registerBridge(ts, alice, "alice-route-a");
      const b = await registerBridge(ts, alice, "alice-route-b");
      const mixed = await call(ts, a.deviceToken, "PUT", "/local-agent/default-route", {
        endpointId: a.endpointId,
        sessionHandle: b.sessionHandle,
      });
      expect(mixed.status).toBe(404);
      expect(mixed.body.error).toBe("session_not_found");
      const otherDevice = await call(ts, a.deviceToken, "PUT", "/local-agent/default-route", {
        endpointId: b.endpointId,
        sessionHandle: b.sessionHandle,
      });
      expect(otherDevice.status).toBe(404);
      expect(otherDevice.body.error).toBe("endpoint_not_found");
      const bobs = await registerBridge(ts, bob, "bob-route");
      const foreign = await call(ts, alice.apiKey, "PUT", "/local-agent/default-route", {
        endpointId: bobs.endpointId,
        sessionHandle: bobs.sessionHandle,
      });
      expect(foreign.status).toBe(404);
      await ok(ts, b.deviceToken, "PATCH", `/local-agent/sessions/${b.sessionHandle}`, { state: "closed" });
      const closed = await call(ts, b.deviceToken, "PUT", "/local-agent/default-route", {
        endpointId: b.endpointId,
        sessionHandle: b.sessionHandle,
      });
      expect(closed.status).toBe(409);
      expect(closed.body.error).toBe("session_closed");
      const missing = await call(ts, b.deviceToken, "PUT", "/local-agent/default-route", { endpointId: b.endpointId });
      expect(missing.status).toBe(400);
      expect(String(missing.body.message)).toContain("body.sessionHandle");

      // Alice's route still points at b (set last by registerBridge): a may not clear it, b may.
      expect(await ok(ts, a.deviceToken, "DELETE", "/local-agent/default-route")).toEqual({ success: true, cleared: false });
      expect(await ok(ts, alice.apiKey, "GET", "/local-agent/default-route")).toMatchObject({ endpointId: b.endpointId });
      expect(await ok(ts, b.deviceToken, "DELETE", "/local-agent/default-route")).toEqual({ success: true, cleared: true });
    });
  });

  describe("revocation", () => {
    it("lets the device revoke itself: token refused at once, sessions closed, default route cleared", async () => {
      const bridge = await registerBridge(ts, bob, "bob-revoke-self");
      const revoked = await ok(ts, bridge.deviceToken, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`);
      expect(revoked).toEqual({ success: true, endpointId: bridge.endpointId, revokedAt: expect.any(String) });
      const after = await call(ts, bridge.deviceToken, "GET", "/local-agent/whoami");
      expect(after.status).toBe(401);
      expect((await call(ts, bob.apiKey, "GET", "/local-agent/default-route")).status).toBe(404);
      const session = await ts.server.context.db
        .selectFrom("runtime_sessions")
        .select("state")
        .where("handle", "=", bridge.sessionHandle)
        .executeTakeFirstOrThrow();
      expect(session.state).toBe("closed");
      const listed = await ok<{ endpoints: EndpointBody[] }>(ts, bob.apiKey, "GET", "/local-agent/endpoints");
      expect(listed.endpoints.map((e) => e.endpointId)).not.toContain(bridge.endpointId);
      expect(await auditActions(bridge.endpointId)).toEqual(["endpoint.register", "endpoint.revoke"]);
    });

    it("lets the owner revoke; anyone else gets 404; a second revoke answers the same time", async () => {
      const bridge = await registerBridge(ts, bob, "bob-revoke-owner");
      const intruder = await call(ts, alice.apiKey, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`);
      expect(intruder.status).toBe(404);
      expect(intruder.body.error).toBe("endpoint_not_found");
      const aliceBridge = await registerBridge(ts, alice, "alice-intruder");
      expect((await call(ts, aliceBridge.deviceToken, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`)).status).toBe(404);
      const bobOther = (await register(bob, "bob-sibling")).body.deviceToken;
      expect((await call(ts, bobOther, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`)).status).toBe(404);
      expect((await call(ts, bridge.deviceToken, "GET", "/local-agent/whoami")).status).toBe(200);

      const first = await ok(ts, bob.apiKey, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`);
      const second = await ok(ts, bob.apiKey, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`);
      expect(second).toEqual(first);
      expect((await call(ts, bridge.deviceToken, "POST", `/local-agent/endpoints/${bridge.endpointId}/heartbeat`)).status).toBe(401);
      expect((await call(ts, bob.apiKey, "DELETE", "/local-agent/endpoints/ep_unknown")).status).toBe(404);
    });

    it("ends the endpoint's open realtime streams", async () => {
      const bridge = await registerBridge(ts, carol, "carol-stream");
      const reader = StreamReader.open(ts, bridge);
      try {
        await expect.poll(() => reader.status, { timeout: 5_000 }).toBe(200);
        await ok(ts, carol.apiKey, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`);
        await expect.poll(() => reader.ended, { timeout: 5_000 }).toBe(true);
      } finally {
        await reader.close();
      }
    });

    it("ends streams opened with a token that re-registration rotated", async () => {
      const bridge = await registerBridge(ts, carol, "carol-rotate-stream");
      const reader = StreamReader.open(ts, bridge);
      try {
        await expect.poll(() => reader.status, { timeout: 5_000 }).toBe(200);
        await register(carol, "carol-rotate-stream");
        await expect.poll(() => reader.ended, { timeout: 5_000 }).toBe(true);
      } finally {
        await reader.close();
      }
    });

    it("brings a revoked device back with re-registration: same endpoint, un-revoked", async () => {
      const first = (await register(alice, "alice-comeback")).body;
      await ok(ts, alice.apiKey, "DELETE", `/local-agent/endpoints/${first.endpoint.endpointId}`);
      const again = await register(alice, "alice-comeback");
      expect(again.status).toBe(200);
      expect(again.body.endpoint).toMatchObject({ endpointId: first.endpoint.endpointId, revokedAt: null, presence: "online" });
      expect((await call(ts, again.body.deviceToken, "GET", "/local-agent/whoami")).status).toBe(200);
      expect((await call(ts, first.deviceToken, "GET", "/local-agent/whoami")).status).toBe(401);
    });
  });

  describe("whoami, pair-status and resolve-person", () => {
    it("answers whoami for a user key without device fields", async () => {
      expect(await ok(ts, alice.apiKey, "GET", "/local-agent/whoami")).toEqual({
        success: true,
        principalId: String(alice.userId),
        userId: alice.userId,
        username: "alice",
        credentialKind: "api_key",
      });
      expect((await call(ts, null, "GET", "/local-agent/whoami")).status).toBe(401);
    });

    it("reports paired only for an online endpoint with an open session accepting inbound", async () => {
      const dave = await ts.addUser("dave");
      const status = () => ok<Record<string, unknown>>(ts, dave.apiKey, "GET", "/local-agent/pair-status");
      expect(await status()).toEqual({
        success: true,
        status: "setup_bridge",
        message: "Your account has no default route",
        runtimeStatus: "not_paired",
        paired: false,
        reason: "no_default_route",
      });
      const bridge = await registerBridge(ts, dave, "dave-laptop");
      const paired = await status();
      expect(paired).toMatchObject({
        success: true,
        status: "ready",
        runtimeStatus: "paired",
        paired: true,
        sessionHandle: bridge.sessionHandle,
        endpoint: { endpointId: bridge.endpointId, presence: "online" },
      });
      expect(paired.reason).toBeUndefined();

      await ok(ts, bridge.deviceToken, "PATCH", `/local-agent/sessions/${bridge.sessionHandle}`, { allowInbound: false });
      expect(await status()).toMatchObject({ paired: false, reason: "inbound_disabled" });
      await ok(ts, bridge.deviceToken, "PATCH", `/local-agent/sessions/${bridge.sessionHandle}`, { state: "closed" });
      expect(await status()).toMatchObject({ paired: false, reason: "session_closed" });
      await ok(ts, bridge.deviceToken, "PATCH", `/local-agent/sessions/${bridge.sessionHandle}`, { state: "idle", allowInbound: true });
      expect(await status()).toMatchObject({ paired: true });

      ts.server.context.clock.advance(PRESENCE_TIMEOUT_MS + 1_000);
      expect(await status()).toMatchObject({
        status: "setup_bridge",
        runtimeStatus: "offline",
        paired: false,
        reason: "endpoint_offline",
        endpoint: { presence: "offline" },
      });
      await ok(ts, bridge.deviceToken, "POST", `/local-agent/endpoints/${bridge.endpointId}/heartbeat`);
      expect(await status()).toMatchObject({ paired: true });

      await ok(ts, dave.apiKey, "DELETE", `/local-agent/endpoints/${bridge.endpointId}`);
      expect(await status()).toEqual({
        success: true,
        status: "setup_bridge",
        message: "Your account has no default route",
        runtimeStatus: "not_paired",
        paired: false,
        reason: "no_default_route",
      });
      expect((await call(ts, bridge.deviceToken, "GET", "/local-agent/pair-status")).status).toBe(401);
    });

    it("resolves only connected people, and answers the same 404 for strangers and unknown names", async () => {
      const erin = await ts.addUser("erin");
      const frank = await ts.addUser("frank");
      const stranger = await call(ts, erin.apiKey, "GET", "/local-agent/resolve-person?handle=frank");
      const unknown = await call(ts, erin.apiKey, "GET", "/local-agent/resolve-person?handle=nobody-here");
      expect(stranger.status).toBe(404);
      expect(unknown.status).toBe(404);
      expect(stranger.body.error).toBe("person_not_found");
      expect(unknown.body.error).toBe("person_not_found");
      expect((await call(ts, erin.apiKey, "GET", `/local-agent/resolve-person?handle=${frank.userId}`)).status).toBe(404);
      expect((await call(ts, erin.apiKey, "GET", "/local-agent/resolve-person?handle=erin")).status).toBe(404);

      // erin asks frank for agent access; frank accepts: erin may now target frank.
      await grantAgentAccess(ts, erin, frank);
      const expected = {
        success: true,
        principalId: String(frank.userId),
        userId: frank.userId,
        username: "frank",
        name: null,
        agentAccess: { theyGaveYou: true, youGaveThem: false },
      };
      for (const handle of ["frank", "@frank", "frank_coo", "FRANK", String(frank.userId)]) {
        expect(await ok(ts, erin.apiKey, "GET", `/local-agent/resolve-person?handle=${encodeURIComponent(handle)}`)).toEqual(expected);
      }
      expect(await ok(ts, frank.apiKey, "GET", "/local-agent/resolve-person?handle=erin")).toMatchObject({
        username: "erin",
        agentAccess: { theyGaveYou: false, youGaveThem: true },
      });
      const empty = await call(ts, erin.apiKey, "GET", "/local-agent/resolve-person?handle=");
      expect(empty.status).toBe(400);
      expect(String(empty.body.message)).toContain("query.handle");
      expect((await call(ts, erin.apiKey, "GET", "/local-agent/resolve-person")).status).toBe(400);
    });
  });
  it("answers every route with a body matching its published schema (typed client, validated)", async () => {
    const gina = await ts.addUser("gina");
    const user = gina.client;
    const registered = await user.call("registerRuntimeEndpoint", { body: { runtime: "codex", deviceId: "gina-typed", label: "Typed" } });
    const device = new TandemClient({ baseUrl: ts.server.apiUrl, token: registered.deviceToken, validateResponses: true });
    const { endpointId } = registered.endpoint;
    await device.call("runtimeEndpointHeartbeat", { params: { id: endpointId } });
    const { sessionHandle } = await device.call("registerRuntimeSession", { body: { endpointId, allowInbound: true } });
    await device.call("updateRuntimeSession", { params: { handle: sessionHandle }, body: { state: "busy" } });
    await device.call("setDefaultRoute", { body: { endpointId, sessionHandle } });
    await user.call("getDefaultRoute");
    await device.call("whoami");
    await user.call("whoami");
    await user.call("listRuntimeEndpoints");
    expect((await user.call("pairStatus")).paired).toBe(true);
    await user.call("clearDefaultRoute");
    expect(await user.call("pairStatus")).toMatchObject({
      success: true,
      status: "setup_bridge",
      paired: false,
      reason: "no_default_route",
    });
    const started = await ts.anonymous.call("startDeviceCode", { body: { runtime: "codex", deviceId: "gina-paired" } });
    await user.call("approveDeviceCode", { body: { userCode: started.userCode, action: "approve" } });
    const polled = await ts.anonymous.call("pollDeviceCode", { body: { pollToken: started.pollToken } });
    expect(polled.status).toBe("approved");
    await ts.anonymous.call("pollDeviceCode", { body: { pollToken: started.pollToken } });
    await device.call("revokeRuntimeEndpoint", { params: { id: endpointId } });
  });
});
