import { netAliasRoutes, type RouteId, routes } from "@tandem/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentPair, type Bridge, call, grantAgentAccess, ok, openGrant, registerBridge } from "./delegation-fixture";
import { startTestServer, type TestServer, type TestUser } from "./harness";

/**
 * The authorization matrix of the delegation layer: every route × every kind of caller, with the
 * status each must get. Alice asks, Bob serves, Carol is a stranger with her own key and bridge.
 *
 * - `none`: no credential; `wrong`: a well-formed key nobody issued;
 * - `userKey` / `ownerDevice`: the key and the bridge of the person the object belongs to;
 * - `siblingDevice`: another bridge of the same person: it speaks for the person, but never for
 *   the other bridge's endpoint, deliveries or approvals;
 * - `otherDevice` / `otherKey`: Carol's bridge and key.
 *
 * Each cell gets fresh objects from its row's `prepare`, so one caller's success never changes
 * what the next caller sees.
 */
const CALLERS = ["none", "wrong", "userKey", "ownerDevice", "siblingDevice", "otherDevice", "otherKey"] as const;
type Caller = (typeof CALLERS)[number];

interface Request {
  path: string;
  body?: unknown;
  /** A bridge made for this cell (when the route would revoke the shared one). */
  ownerDevice?: string;
}

interface Row {
  owner: "alice" | "bob";
  /**
   * `owned`: the request names the owner's object, so strangers get 404.
   * `self`: the route answers about the caller, so every permitted caller succeeds.
   */
  kind: "owned" | "self";
  ok: number;
  prepare: () => Promise<Request>;
  /** The route acts on one endpoint's own objects: another bridge of the owner gets this status. */
  endpointBound?: number;
  /** Where a caller's status differs from what `kind` implies. */
  except?: Partial<Record<Caller, number>>;
}

const DELEGATION_PATHS = /^\/(local-agent|local-realtime|network|os\/network|net(\/|$))/;

describe("authorization matrix of the delegation layer", () => {
  let ts: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let aliceBridge: Bridge;
  let bobBridge: Bridge;
  let carolBridge: Bridge;
  let aliceSpare: Bridge;
  let bobSpare: Bridge;
  let serial = 0;
  const fresh = (prefix: string) => `${prefix}${++serial}`;

  beforeAll(async () => {
    ts = await startTestServer({ rateLimitBurst: 1_000_000, rateLimitPerMinute: 1_000_000, maintenanceIntervalMs: 0 });
    ({ alice, bob, aliceBridge, bobBridge } = await agentPair(ts));
    carol = await ts.addUser("carol");
    carolBridge = await registerBridge(ts, carol, "carol-desktop");
    aliceSpare = await registerBridge(ts, alice, "alice-phone");
    bobSpare = await registerBridge(ts, bob, "bob-phone");
    // registerBridge makes each new bridge the default route; the first ones stay the defaults.
    for (const bridge of [aliceBridge, bobBridge]) {
      await ok(ts, bridge.deviceToken, "PUT", "/local-agent/default-route", {
        endpointId: bridge.endpointId,
        sessionHandle: bridge.sessionHandle,
      });
    }
    expect((await ts.cli(["credits", "set", "alice", "1000"])).code).toBe(0);
  });

  afterAll(() => ts.stop());

  const grant = () => openGrant(ts, alice.apiKey, bob);
  const pendingGrant = () =>
    ok<{ commSessionId: string }>(ts, alice.apiKey, "POST", "/local-agent/grants", {
      target: { kind: "person_default_runtime", principalId: String(bob.userId) },
    });
  const message = async () => {
    const g = await grant();
    return ok<{ messageId: string; commSessionId: string }>(ts, alice.apiKey, "POST", "/local-agent/messages", {
      commSessionId: g.commSessionId,
      clientMessageId: fresh("m"),
      kind: "text",
      payload: { text: "hello" },
    });
  };
  const approval = async () => {
    const g = await grant();
    return ok<{ approvalId: string }>(ts, bobBridge.deviceToken, "POST", "/local-agent/tool-approvals", {
      commSessionId: g.commSessionId,
      toolName: "Bash",
      toolInputSummary: "ls",
    });
  };
  const collaboration = () =>
    ok<{ collaborationId: string }>(
      ts,
      aliceBridge.deviceToken,
      "POST",
      "/local-agent/delegations",
      {
        target: "bob",
        task: "help",
        sessionHandle: aliceBridge.sessionHandle,
        clientMessageId: fresh("d"),
      },
      [202],
    );
  const stranger = () => ts.addUser(fresh("user"));
  /** A stranger writes to alice, which opens a message request to her; answers its path. */
  const messageRequest = async () => {
    const from = await stranger();
    await ok(ts, from.apiKey, "POST", "/agent/message", { to: alice.username, message: "hello" });
    const { requests } = await ok<{ requests: { id: number; from: { username: string } }[] }>(
      ts,
      alice.apiKey,
      "GET",
      "/conversations/requests?limit=100",
    );
    const request = requests.find((r) => r.from.username === from.username);
    if (!request) throw new Error(`no message request from ${from.username}`);
    return `/conversations/requests/${request.id}`;
  };
  /** A stranger alice has given agent access (the handshake, accepted). */
  const alicesGrantee = async () => {
    const grantee = await stranger();
    await grantAgentAccess(ts, grantee, alice);
    return grantee;
  };
  /** A stranger asks `target` for agent access; returns the stranger and the request id. */
  const incomingAgentRequest = async (target: TestUser) => {
    const from = await stranger();
    await ok(ts, from.apiKey, "POST", "/network/request", { to: `${target.username}_coo` });
    const { incoming } = await ok<{ incoming: { requestId: number; from: { username: string } }[] }>(
      ts,
      target.apiKey,
      "GET",
      "/network/requests",
    );
    const request = incoming.find((r) => r.from.username === from.username);
    return { from, requestId: request?.requestId };
  };
  const deviceCode = () =>
    ok<{ userCode: string; pollToken: string }>(ts, null, "POST", "/local-agent/device-code/start", {
      deviceId: fresh("pair"),
      runtime: "codex",
    });

  const rows: Partial<Record<RouteId, Row>> = {
    networkRequest: {
      owner: "alice",
      kind: "self",
      ok: 201,
      prepare: async () => ({ path: "/network/request", body: { to: (await stranger()).username } }),
    },
    networkListRequests: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/network/requests" }) },
    networkAccept: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        const { requestId } = await incomingAgentRequest(bob);
        return { path: "/network/accept", body: { requestId, type: "agent", action: "accept" } };
      },
    },
    networkWithdrawRequest: {
      owner: "alice",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        const to = await stranger();
        const sent = await ok<{ requestId: number }>(ts, alice.apiKey, "POST", "/network/request", { to: to.username });
        return { path: `/network/requests/${sent.requestId}` };
      },
    },
    networkOverview: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/network" }) },
    osNetworkOverview: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/os/network" }) },
    guestConversations: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/os/network/conversations" }) },
    guestConversation: {
      owner: "alice",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        const { shareLink } = await ok<{ shareLink: { token: string } }>(
          ts,
          alice.apiKey,
          "POST",
          "/os/share",
          { requireSignIn: false },
          [201],
        );
        const sent = await ts.fetch("/api/chat/guest-v04", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ token: shareLink.token, message: "hello" }),
        });
        const { sessionId } = (await sent.json()) as { sessionId: string };
        return { path: `/os/network/conversations/${sessionId}` };
      },
    },
    networkConnect: {
      owner: "alice",
      kind: "self",
      ok: 200,
      // Redeeming one's own link is a 400; anyone else's key connects.
      except: { userKey: 400 },
      prepare: async () => {
        const { shareLink } = await ok<{ shareLink: { token: string } }>(ts, alice.apiKey, "POST", "/os/share", {}, [201]);
        return { path: "/network/connect", body: { shareToken: shareLink.token } };
      },
    },
    networkUpdatePermissions: {
      owner: "alice",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        const from = await alicesGrantee();
        return { path: `/network/contacts/${from.userId}/permissions`, body: { permissions: { notesAccess: "read" } } };
      },
    },
    networkWithdrawPermissions: {
      owner: "alice",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        const from = await alicesGrantee();
        return { path: `/network/contacts/${from.userId}/permissions` };
      },
    },
    networkRemoveContact: {
      owner: "alice",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        const friend = await stranger();
        const sent = await ok<{ requestId: number }>(ts, friend.apiKey, "POST", "/network/request", { to: "alice" });
        await ok(ts, alice.apiKey, "POST", "/network/accept", { requestId: sent.requestId, type: "friend", action: "accept" });
        return { path: `/network/contacts/${friend.userId}` };
      },
    },
    registerRuntimeEndpoint: {
      owner: "alice",
      kind: "self",
      ok: 201,
      prepare: async () => ({ path: "/local-agent/endpoints", body: { runtime: "codex", deviceId: fresh("device") } }),
      // A device token re-registers only its own device (bridge-wire.test.ts); this one names another.
      except: { ownerDevice: 403, siblingDevice: 403, otherDevice: 403 },
    },
    listRuntimeEndpoints: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/endpoints" }) },
    runtimeEndpointHeartbeat: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 200,
      prepare: async () => ({ path: `/local-agent/endpoints/${aliceBridge.endpointId}/heartbeat` }),
    },
    revokeRuntimeEndpoint: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 200,
      prepare: async () => {
        const spare = await registerBridge(ts, alice, fresh("spare"));
        // registerBridge made the spare alice's default route; put hers back.
        await ok(ts, alice.apiKey, "PUT", "/local-agent/default-route", {
          endpointId: aliceBridge.endpointId,
          sessionHandle: aliceBridge.sessionHandle,
        });
        return { path: `/local-agent/endpoints/${spare.endpointId}`, ownerDevice: spare.deviceToken };
      },
    },
    registerRuntimeSession: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 201,
      prepare: async () => ({
        path: "/local-agent/sessions",
        body: { endpointId: aliceBridge.endpointId, label: "extra", state: "idle", deliveryMode: "managed_stream", allowInbound: true },
      }),
    },
    updateRuntimeSession: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 200,
      prepare: async () => ({ path: `/local-agent/sessions/${aliceBridge.sessionHandle}`, body: { state: "idle" } }),
    },
    setDefaultRoute: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 200,
      prepare: async () => ({
        path: "/local-agent/default-route",
        body: { endpointId: aliceBridge.endpointId, sessionHandle: aliceBridge.sessionHandle },
      }),
    },
    getDefaultRoute: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/default-route" }) },
    clearDefaultRoute: {
      owner: "alice",
      kind: "self",
      ok: 200,
      prepare: async () => {
        // Clear, then restore in the next prepare: every caller finds a route to clear.
        for (const [user, bridge] of [
          [alice, aliceBridge],
          [carol, carolBridge],
        ] as const) {
          await ok(ts, user.apiKey, "PUT", "/local-agent/default-route", {
            endpointId: bridge.endpointId,
            sessionHandle: bridge.sessionHandle,
          });
        }
        return { path: "/local-agent/default-route" };
      },
    },
    whoami: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/whoami" }) },
    listGuestMessages: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/guest-messages" }) },
    pollGuestMessages: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/guest-messages", body: {} }) },
    // No message is waiting: every permitted caller learns only that (the reply path is tested in share-links.test.ts).
    replyGuestMessage: {
      owner: "alice",
      kind: "self",
      ok: 404,
      prepare: async () => ({ path: "/local-agent/guest-messages/reply", body: { messageId: 999_999, body: "hi" } }),
    },
    pairStatus: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/pair-status" }) },
    resolvePerson: { owner: "alice", kind: "owned", ok: 200, prepare: async () => ({ path: "/local-agent/resolve-person?handle=bob" }) },
    startDeviceCode: {
      owner: "alice",
      kind: "self",
      ok: 200,
      prepare: async () => ({ path: "/local-agent/device-code/start", body: { deviceId: fresh("pair"), runtime: "codex" } }),
    },
    approveDeviceCode: {
      owner: "alice",
      kind: "self",
      ok: 200,
      prepare: async () => ({
        path: "/local-agent/device-code/approve",
        body: { userCode: (await deviceCode()).userCode, action: "deny" },
      }),
    },
    pollDeviceCode: {
      owner: "alice",
      kind: "self",
      ok: 200,
      prepare: async () => ({ path: "/local-agent/device-code/poll", body: { pollToken: (await deviceCode()).pollToken } }),
    },
    devicePairingPage: {
      owner: "alice",
      kind: "self",
      ok: 200,
      prepare: async () => ({ path: `/local-agent/pair?code=${(await deviceCode()).userCode}` }),
    },
    requestGrant: {
      owner: "alice",
      kind: "owned",
      ok: 201,
      prepare: async () => ({
        path: "/local-agent/grants",
        body: { target: { kind: "person_default_runtime", principalId: String(bob.userId) } },
      }),
      // Carol names Bob, who never gave her agent access.
      except: { otherDevice: 403, otherKey: 403 },
    },
    listGrants: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/grants" }) },
    getGrant: {
      owner: "alice",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/local-agent/grants/${(await grant()).commSessionId}` }),
    },
    acceptGrant: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/local-agent/grants/${(await pendingGrant()).commSessionId}/accept` }),
    },
    declineGrant: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/local-agent/grants/${(await pendingGrant()).commSessionId}/decline` }),
    },
    revokeGrant: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/local-agent/grants/${(await grant()).commSessionId}/revoke` }),
    },
    sendGrantMessage: {
      owner: "alice",
      kind: "owned",
      ok: 201,
      prepare: async () => ({
        path: "/local-agent/messages",
        body: { commSessionId: (await grant()).commSessionId, clientMessageId: fresh("m"), kind: "text", payload: { text: "hi" } },
      }),
    },
    getGrantMessage: {
      owner: "alice",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/local-agent/messages/${(await message()).messageId}` }),
    },
    ackGrantMessage: {
      owner: "bob",
      kind: "owned",
      endpointBound: 403,
      ok: 200,
      prepare: async () => ({
        path: `/local-agent/messages/${(await message()).messageId}/ack`,
        body: { phase: "device_ack", attemptId: "a1" },
      }),
    },
    replyToGrantMessage: {
      owner: "bob",
      kind: "owned",
      endpointBound: 403,
      ok: 201,
      prepare: async () => ({ path: `/local-agent/messages/${(await message()).messageId}/reply`, body: { body: "done" } }),
    },
    validateInjection: {
      owner: "bob",
      kind: "owned",
      endpointBound: 200,
      ok: 200,
      prepare: async () => {
        const sent = await message();
        return {
          path: "/local-agent/injections/validate",
          body: { messageId: sent.messageId, commSessionId: sent.commSessionId, endpointId: bobBridge.endpointId },
        };
      },
      // Validation always answers 200; for Carol's bridge the answer is `valid: false` (checked below).
      except: { otherDevice: 200 },
    },
    getCredits: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/credits" }) },
    requestToolApproval: {
      owner: "bob",
      kind: "owned",
      endpointBound: 404,
      ok: 201,
      prepare: async () => ({
        path: "/local-agent/tool-approvals",
        body: { commSessionId: (await grant()).commSessionId, toolName: "Bash", toolInputSummary: "ls" },
      }),
    },
    listToolApprovals: { owner: "bob", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/tool-approvals" }) },
    getToolApproval: {
      owner: "bob",
      kind: "owned",
      endpointBound: 404,
      ok: 200,
      prepare: async () => ({ path: `/local-agent/tool-approvals/${(await approval()).approvalId}` }),
    },
    resolveToolApproval: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/local-agent/tool-approvals/${(await approval()).approvalId}/resolve`, body: { decision: "deny" } }),
    },
    listToolPolicies: { owner: "bob", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/tool-policies" }) },
    createToolPolicy: {
      owner: "bob",
      kind: "self",
      ok: 201,
      prepare: async () => ({ path: "/local-agent/tool-policies", body: { toolName: "Read" } }),
    },
    deleteToolPolicy: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        const created = await ok<{ policy: { policyId: number } }>(ts, bob.apiKey, "POST", "/local-agent/tool-policies", {
          toolName: "Grep",
        });
        return { path: `/local-agent/tool-policies/${created.policy.policyId}` };
      },
    },
    createDelegation: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 202,
      prepare: async () => ({
        path: "/local-agent/delegations",
        body: { target: "bob", task: "help", sessionHandle: aliceBridge.sessionHandle, clientMessageId: fresh("d") },
      }),
    },
    listCollaborations: { owner: "bob", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/collaborations" }) },
    respondToCollaboration: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => ({
        path: `/local-agent/collaborations/${(await collaboration()).collaborationId}/respond`,
        body: { decision: "deny" },
      }),
    },
    listCollaborationAllowances: {
      owner: "bob",
      kind: "self",
      ok: 200,
      prepare: async () => ({ path: "/local-agent/collaboration-allowances" }),
    },
    deleteCollaborationAllowance: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => {
        // An earlier caller may have left Bob's allowance in place; start from none.
        await call(ts, bob.apiKey, "DELETE", `/local-agent/collaboration-allowances/${alice.userId}`);
        const { collaborationId } = await collaboration();
        await ok(ts, bob.apiKey, "POST", `/local-agent/collaborations/${collaborationId}/respond`, { decision: "always_allow" });
        return { path: `/local-agent/collaboration-allowances/${alice.userId}` };
      },
    },
    realtimeStream: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 200,
      prepare: async () => ({ path: `/local-realtime/stream?endpointId=${aliceBridge.endpointId}&cursor=0` }),
    },
    realtimePoll: {
      owner: "alice",
      kind: "owned",
      endpointBound: 404,
      ok: 200,
      prepare: async () => ({ path: `/local-realtime/poll?endpointId=${aliceBridge.endpointId}&cursor=0` }),
    },
    listAudit: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/local-agent/audit" }) },
    // Its rules are messaging's (agent-message tests); here, the layering for it and its /net alias:
    // a message to a stranger is delivered to every key alike (held as a message request) after authentication.
    agentMessage: {
      owner: "alice",
      kind: "self",
      ok: 200,
      prepare: async () => ({ path: "/agent/message", body: { to: (await stranger()).username, message: "hello" } }),
    },
    // Message requests: the recipient's own list; answering one is the recipient's alone (404 to anyone else).
    listMessageRequests: { owner: "alice", kind: "self", ok: 200, prepare: async () => ({ path: "/conversations/requests" }) },
    acceptMessageRequest: { owner: "alice", kind: "owned", ok: 200, prepare: async () => ({ path: `${await messageRequest()}/accept` }) },
    ignoreMessageRequest: { owner: "alice", kind: "owned", ok: 200, prepare: async () => ({ path: `${await messageRequest()}/ignore` }) },
    blockMessageRequest: { owner: "alice", kind: "owned", ok: 200, prepare: async () => ({ path: `${await messageRequest()}/block` }) },
    // Escalations (/net/escalations is in the matrix): a bridge approval waiting for bob is one of bob's.
    listEscalations: { owner: "bob", kind: "self", ok: 200, prepare: async () => ({ path: "/escalations" }) },
    getEscalation: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/escalations/${(await approval()).approvalId}` }),
    },
    resolveEscalation: {
      owner: "bob",
      kind: "owned",
      ok: 200,
      prepare: async () => ({ path: `/escalations/${(await approval()).approvalId}/resolve`, body: { decision: "stop" } }),
    },
    netContactsRequest: {
      owner: "alice",
      kind: "self",
      ok: 201,
      prepare: async () => ({ path: "/net/contacts/request", body: { to: (await stranger()).username } }),
    },
  };
  // A /net alias is its original at another path: the same row, its request sent to the alias.
  const literalPart = (path: string) => path.split("/:")[0] as string;
  for (const [id, alias] of Object.entries(netAliasRoutes)) {
    const original = rows[alias.aliasOf];
    if (!original) continue;
    const [from, to] = [literalPart(routes[alias.aliasOf].path), literalPart(alias.path)];
    rows[id as RouteId] = {
      ...original,
      prepare: async () => {
        const request = await original.prepare();
        if (!request.path.startsWith(from)) throw new Error(`${id}: ${request.path} does not start with ${from}`);
        return { ...request, path: `${to}${request.path.slice(from.length)}` };
      },
    };
  }

  function expected(id: RouteId, row: Row, caller: Caller): number {
    const exception = row.except?.[caller];
    if (exception !== undefined) return exception;
    const { auth } = routes[id];
    if (auth === "public") return row.ok;
    if (caller === "none" || caller === "wrong") return 401;
    const device = caller === "ownerDevice" || caller === "siblingDevice" || caller === "otherDevice";
    if ((auth === "user" && device) || (auth === "device" && !device)) return 403;
    if (row.kind === "owned" && (caller === "otherDevice" || caller === "otherKey")) return 404;
    if (caller === "siblingDevice" && row.endpointBound !== undefined) return row.endpointBound;
    return row.ok;
  }

  function tokenFor(row: Row, caller: Caller, request: Request): string | null {
    const owner =
      row.owner === "alice" ? { user: alice, bridge: aliceBridge, spare: aliceSpare } : { user: bob, bridge: bobBridge, spare: bobSpare };
    switch (caller) {
      case "none":
        return null;
      case "wrong":
        return `svc_sk_${"A".repeat(12)}${"b".repeat(32)}`;
      case "userKey":
        return owner.user.apiKey;
      case "ownerDevice":
        return request.ownerDevice ?? owner.bridge.deviceToken;
      case "siblingDevice":
        return owner.spare.deviceToken;
      case "otherDevice":
        return carolBridge.deviceToken;
      case "otherKey":
        return carol.apiKey;
    }
  }

  /** Sends the request; an event stream is cut off once its status is known. */
  async function status(method: string, request: Request, token: string | null): Promise<{ status: number; body: unknown }> {
    const controller = new AbortController();
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (request.body !== undefined) headers["content-type"] = "application/json";
    const response = await ts.fetch(`/api/v1${request.path}`, {
      method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: controller.signal,
    });
    if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
      controller.abort();
      return { status: response.status, body: null };
    }
    const text = await response.text();
    return { status: response.status, body: response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text };
  }

  it("names every delegation route", () => {
    const delegationRoutes = (Object.keys(routes) as RouteId[]).filter((id) => DELEGATION_PATHS.test(routes[id].path));
    expect(delegationRoutes.length).toBeGreaterThan(40);
    expect(delegationRoutes.filter((id) => !(id in rows))).toEqual([]);
  });

  it("answers every route × caller as the matrix says", { timeout: 240_000 }, async () => {
    const mismatches: string[] = [];
    for (const [id, row] of Object.entries(rows) as [RouteId, Row][]) {
      for (const caller of CALLERS) {
        const request = await row.prepare();
        const answer = await status(routes[id].method, request, tokenFor(row, caller, request));
        const want = expected(id, row, caller);
        if (answer.status !== want) {
          mismatches.push(`${id} × ${caller}: got ${answer.status}, want ${want} ${JSON.stringify(answer.body).slice(0, 160)}`);
        }
        if (answer.status >= 400 && typeof answer.body === "object") {
          // Every refusal is the flat error shape, and nothing a caller sends is a 500.
          expect(answer.body).toMatchObject({ success: false, error: expect.any(String), message: expect.any(String) });
        }
        if (id === "validateInjection" && (caller === "otherDevice" || caller === "siblingDevice")) {
          expect(answer.body).toMatchObject({ valid: false });
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});
