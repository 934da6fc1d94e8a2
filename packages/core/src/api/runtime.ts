import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/**
 * Runtime endpoints (a local bridge in front of Claude Code or Codex), their sessions, the
 * owner's default route, and device-code pairing. Wire: `runtime-wire.md`, "Registration and
 * sessions" and "Device-code pairing".
 */

export const RUNTIMES = ["claude-code", "codex"] as const;
export const RuntimeName = z.enum(RUNTIMES);
export type RuntimeName = z.infer<typeof RuntimeName>;

/** The largest `capabilities` value accepted, as JSON, in bytes. */
export const MAX_CAPABILITIES_BYTES = 8 * 1024;

const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

/** Bridges send an array of strings; the interface describes an object. Either is kept as sent. */
export const RuntimeCapabilities = z
  .union([z.array(z.string().max(200)).max(200), z.record(z.string(), z.unknown())], {
    error: "must be an array of strings or an object",
  })
  .refine((value) => jsonBytes(value) <= MAX_CAPABILITIES_BYTES, { error: `must be at most ${MAX_CAPABILITIES_BYTES} bytes as JSON` });

/**
 * Checked by the server (not by an enum here) so that any other value gets the stable code
 * `invalid_runtime` rather than the generic `invalid_request`.
 */
const RuntimeInput = z.string().max(100).describe('"claude-code" or "codex"; anything else is 400 invalid_runtime');
const DeviceId = z.string().trim().min(1, { error: "must not be empty" }).max(200);
const Version = z.string().max(100).nullable();
const Label = z.string().trim().max(200).nullable();
const EndpointId = z.string().min(1).max(100).describe("opaque endpoint id (ep_…)");
/** Opaque, chosen by the bridge or the server; printable ASCII so it travels in a path. */
const SessionHandle = z
  .string()
  .min(1, { error: "must not be empty" })
  .max(200)
  .regex(/^[\x21-\x7e]+$/, { error: "must be printable ASCII without spaces" })
  .describe("opaque session handle; never a provider-native session id");

export const EndpointPresence = z.enum(["online", "offline"]);

export const RuntimeEndpoint = z.object({
  endpointId: z.string(),
  principalId: z.string().describe("the owner's user id, as a string"),
  deviceId: z.string(),
  runtime: RuntimeName,
  presence: EndpointPresence.describe("online while heartbeats arrive; offline after 60 s without one"),
  lastSeenAt: Timestamp.nullable(),
  bridgeVersion: z.string().nullable(),
  adapterVersion: z.string().nullable(),
  capabilities: z.unknown().describe("the array or object the bridge registered"),
  label: z.string().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  revokedAt: Timestamp.nullable(),
});
export type RuntimeEndpoint = z.infer<typeof RuntimeEndpoint>;

export const RuntimeSessionState = z.enum(["idle", "busy", "closed"]);

export const RuntimeSession = z.object({
  sessionHandle: z.string(),
  endpointId: z.string(),
  label: z.string().nullable(),
  state: RuntimeSessionState,
  deliveryMode: z.literal("managed_stream"),
  capabilities: z.unknown(),
  allowInbound: z.boolean(),
  allowMidTurnSteer: z.boolean(),
  workspaceBoundary: z.string().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type RuntimeSession = z.infer<typeof RuntimeSession>;

const EndpointIdParams = z.object({ id: EndpointId });
const HandleParams = z.object({ handle: SessionHandle });

const DefaultRoute = { endpointId: z.string(), sessionHandle: z.string(), updatedAt: Timestamp };

export const PAIR_STATUS_REASONS = [
  "no_default_route",
  "endpoint_not_found",
  "endpoint_offline",
  "session_not_found",
  "session_closed",
  "inbound_disabled",
] as const;

/**
 * pair-status in the words existing bridges know (they go on only with `ready`, or `setup_bridge`,
 * and stop on `ready` with `targetReachable: false`); docs/delegation/runtime.md maps our states onto them.
 */
export const PairStatusName = z.enum(["ready", "setup_bridge", "request_pair", "awaiting_their_accept", "accept_incoming"]);

/** Our own word for a runtime's state, beside the bridges' (`runtimeStatus`). */
export const RuntimePairState = z.enum(["paired", "not_paired", "offline"]);

export const DevicePairingStatus = z.enum(["pending", "approved", "denied", "expired", "consumed"]);

const UserCode = z.string().trim().min(1).max(32).describe("ABCD-EFGH; the dash and letter case are optional");

/** The device-side description shared by registration and pairing. */
const DeviceFields = {
  deviceId: DeviceId,
  runtime: RuntimeInput,
  bridgeVersion: Version.optional(),
  adapterVersion: Version.optional(),
  capabilities: RuntimeCapabilities.optional().describe("array of strings or object, at most 8 KiB; [] when omitted"),
  label: Label.optional(),
};

const PersonHandle = z
  .string()
  .trim()
  .min(1, { error: "must not be empty" })
  .max(200)
  .describe("username, @username, username_coo or principal id");

export const runtimeRoutes = {
  registerRuntimeEndpoint: defineRoute({
    method: "POST",
    path: "/local-agent/endpoints",
    category: "runtime",
    summary:
      "Register a bridge's endpoint (201) and get its device token once; the same deviceId again rotates the token (200). A device token re-registers (and rotates) its own endpoint only",
    auth: "any",
    scope: "os.team:write",
    bodyLimit: 64 * 1024,
    successStatuses: [201, 200],
    body: z.object(DeviceFields),
    response: success({ endpoint: RuntimeEndpoint, deviceToken: z.string().describe("svc_dev_…; shown only in this answer") }),
  }),
  listRuntimeEndpoints: defineRoute({
    method: "GET",
    path: "/local-agent/endpoints",
    category: "runtime",
    summary: "The caller's endpoints that are not revoked, with presence (never tokens)",
    auth: "user",
    scope: "os.team:read",
    response: success({ endpoints: z.array(RuntimeEndpoint) }),
  }),
  runtimeEndpointHeartbeat: defineRoute({
    method: "POST",
    path: "/local-agent/endpoints/:id/heartbeat",
    category: "runtime",
    summary: "Keep the token's own endpoint online",
    auth: "device",
    params: EndpointIdParams,
    body: z.unknown().optional(),
    response: success({ endpointId: z.string(), presence: z.literal("online"), lastSeenAt: Timestamp }),
  }),
  revokeRuntimeEndpoint: defineRoute({
    method: "DELETE",
    path: "/local-agent/endpoints/:id",
    category: "runtime",
    summary: "Revoke an endpoint at once (by its own device or its owner): token, sessions, default route and streams end",
    auth: "any",
    scope: "os.team:write",
    params: EndpointIdParams,
    response: success({ endpointId: z.string(), revokedAt: Timestamp }),
  }),
  registerRuntimeSession: defineRoute({
    method: "POST",
    path: "/local-agent/sessions",
    category: "runtime",
    summary: "Register a session of the token's endpoint (201); a known handle of the same endpoint is updated (200)",
    auth: "device",
    bodyLimit: 64 * 1024,
    successStatuses: [201, 200],
    body: z.object({
      endpointId: EndpointId.optional().describe("must be the token's own endpoint; defaults to it"),
      handle: SessionHandle.optional().describe("the bridge's own handle; the server makes one when omitted"),
      label: Label.optional(),
      state: z.enum(["idle", "busy"]).default("idle"),
      deliveryMode: z.literal("managed_stream").default("managed_stream"),
      capabilities: RuntimeCapabilities.optional(),
      allowInbound: z.boolean().default(false).describe("whether grants may deliver into this session; false when omitted"),
      allowMidTurnSteer: z.boolean().default(false),
      workspaceBoundary: z.string().max(1000).nullable().optional(),
    }),
    response: success({ sessionHandle: z.string(), session: RuntimeSession }),
  }),
  updateRuntimeSession: defineRoute({
    method: "PATCH",
    path: "/local-agent/sessions/:handle",
    category: "runtime",
    summary: "Sync a session's state (idle, busy, closed) and flags; omitted fields are untouched",
    auth: "device",
    params: HandleParams,
    bodyLimit: 64 * 1024,
    body: z.object({
      state: RuntimeSessionState.optional(),
      allowInbound: z.boolean().optional(),
      allowMidTurnSteer: z.boolean().optional(),
      label: Label.optional(),
      capabilities: RuntimeCapabilities.optional(),
    }),
    response: success({ sessionHandle: z.string(), session: RuntimeSession }),
  }),
  setDefaultRoute: defineRoute({
    method: "PUT",
    path: "/local-agent/default-route",
    category: "runtime",
    summary: "Point the owner's inbound grants at one open session of one endpoint",
    auth: "any",
    scope: "os.team:write",
    body: z.object({ endpointId: EndpointId, sessionHandle: SessionHandle }),
    response: success(DefaultRoute),
  }),
  getDefaultRoute: defineRoute({
    method: "GET",
    path: "/local-agent/default-route",
    category: "runtime",
    summary: "The owner's default route, or 404 no_default_route",
    auth: "any",
    scope: "os.team:read",
    response: success(DefaultRoute),
  }),
  clearDefaultRoute: defineRoute({
    method: "DELETE",
    path: "/local-agent/default-route",
    category: "runtime",
    summary: "Clear the default route (a device only clears one that points at itself)",
    auth: "any",
    scope: "os.team:write",
    response: success({ cleared: z.boolean().describe("false when there was no route to clear") }),
  }),
  whoami: defineRoute({
    method: "GET",
    path: "/local-agent/whoami",
    category: "runtime",
    summary: "The principal behind the credential (and its endpoint, for a device token)",
    auth: "any",
    response: success({
      principalId: z.string(),
      userId: z.number().int(),
      username: z.string(),
      credentialKind: z.enum(["api_key", "device"]),
      deviceId: z.string().optional(),
      endpointId: z.string().optional(),
    }),
  }),
  pairStatus: defineRoute({
    method: "GET",
    path: "/local-agent/pair-status",
    category: "runtime",
    summary:
      "Whether a reachable local runtime is paired (the caller's own, or with principalId a connected person's): default route to an online endpoint and an open session accepting inbound",
    auth: "any",
    scope: "os.team:read",
    query: z.object({
      principalId: z
        .string()
        .trim()
        .min(1, { error: "must not be empty" })
        .max(64)
        .optional()
        .describe("a connected person's principal id (or the caller's own); omitted: the caller's own runtime"),
    }),
    response: success({
      status: PairStatusName.describe(
        "own runtime: ready, else setup_bridge; a person who gave you agent access: ready (see targetReachable); connected without it: awaiting_their_accept while your agent request waits, else request_pair; not connected: accept_incoming (their request waits for you) or awaiting_their_accept (yours waits for them)",
      ),
      message: z.string().describe("a sentence a bridge can show"),
      targetReachable: z.boolean().optional().describe("with principalId: whether a grant to that person would reach a runtime now"),
      runtimeStatus: RuntimePairState.describe(
        "paired; offline: the default route's endpoint is offline; not_paired: anything else (or not told: no agent access)",
      ),
      paired: z.boolean(),
      reason: z.enum(PAIR_STATUS_REASONS).optional().describe("why not, when paired is false"),
      endpoint: RuntimeEndpoint.optional(),
      sessionHandle: z.string().optional(),
    }),
  }),
  resolvePerson: defineRoute({
    method: "GET",
    path: "/local-agent/resolve-person",
    category: "runtime",
    summary: "The principal a grant can target, among people already connected to the caller (else 404 person_not_found)",
    auth: "any",
    scope: "os.team:read",
    query: z
      .object({
        q: PersonHandle.optional().describe("the same as handle (what bridges send)"),
        handle: PersonHandle.optional(),
      })
      .refine((query) => query.q !== undefined || query.handle !== undefined, { error: "q (or handle) is required", path: ["q"] })
      .transform((query) => ({ handle: (query.handle ?? query.q) as string })),
    response: success({
      principalId: z.string(),
      userId: z.number().int(),
      username: z.string(),
      name: z.string().nullable(),
      agentAccess: z.object({
        theyGaveYou: z.boolean().describe("they accepted your agent-access request: you may request grants to them"),
        youGaveThem: z.boolean(),
      }),
    }),
  }),
  startDeviceCode: defineRoute({
    method: "POST",
    path: "/local-agent/device-code/start",
    category: "runtime",
    summary: "Start device-code pairing (no credential): a code for the owner to approve and a poll token for the bridge",
    auth: "public",
    bodyLimit: 64 * 1024,
    body: z.object({
      ...DeviceFields,
      purpose: z
        .enum(["bridge", "sign_in"])
        .optional()
        .describe("bridge (default): a device token for a runtime endpoint; sign_in: an API key for an app of the owner"),
    }),
    response: success({
      userCode: z.string().describe("ABCD-EFGH"),
      pollToken: z.string().describe("kept by the bridge; only its hash is stored"),
      approvalUrl: z.string().describe("the page where the owner approves or denies"),
      expiresAt: Timestamp,
      interval: z.number().int().describe("seconds between polls"),
    }),
  }),
  approveDeviceCode: defineRoute({
    method: "POST",
    path: "/local-agent/device-code/approve",
    category: "runtime",
    summary: "The owner approves or denies a pending pairing by its code (404 pairing_not_found, 409 pairing_already_resolved)",
    auth: "user",
    scope: "os.team:write",
    body: z.object({ userCode: UserCode, action: z.enum(["approve", "deny"]) }),
    response: success({
      status: z.enum(["approved", "denied"]),
      deviceId: z.string(),
      runtime: RuntimeName,
      label: z.string().nullable(),
    }),
  }),
  pollDeviceCode: defineRoute({
    method: "POST",
    path: "/local-agent/device-code/poll",
    category: "runtime",
    summary: "The bridge's poll: pending, approved (device token, exactly once), denied, expired or consumed",
    auth: "public",
    body: z.object({ pollToken: z.string().min(1).max(200) }),
    response: success({
      status: DevicePairingStatus,
      deviceToken: z.string().optional().describe("only in the one approved answer of a bridge pairing"),
      apiKey: z.string().optional().describe("only in the one approved answer of a sign_in pairing: svc_sk_… with every scope"),
      userId: z.number().int().optional(),
      username: z.string().optional().describe("with apiKey"),
      endpointId: z.string().optional(),
      endpoint: RuntimeEndpoint.optional(),
    }),
  }),
  devicePairingPage: defineRoute({
    method: "GET",
    path: "/local-agent/pair",
    category: "runtime",
    summary: "The approval page a pairing's approvalUrl points at (HTML; the owner enters an API key in the page)",
    auth: "public",
    query: z.object({ code: z.string().max(64).optional() }),
    response: z.string().describe("text/html"),
  }),
} as const;
