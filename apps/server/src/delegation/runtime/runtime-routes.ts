import { API_BASE_PATH, type runtimeRoutes } from "@tandem/core";
import type { Request } from "express";
import type { AppContext } from "../../context";
import { tooManyRequests } from "../../http/errors";
import { created } from "../../http/reply";
import { HANDLED, type RouteHandlers } from "../../http/router";
import { WebSessions } from "../../oauth/web-session";
import { clearDefaultRoute, getDefaultRoute, noDefaultRoute, setDefaultRoute } from "./default-route-service";
import { heartbeat, listEndpoints, registerEndpoint, revokeEndpoint } from "./endpoints-service";
import { pairStatusAnswer } from "./pair-status-answer";
import { newNonce, pairingPageHeaders, renderPairingPage } from "./pairing-page";
import { decidePairing, deleteOldPairings, findPairingByCode, POLL_INTERVAL_S, pollPairing, startPairing } from "./pairing-service";
import { resolvePerson } from "./resolve-person";
import { registerSession, updateSession } from "./sessions-service";

/** Where people reach this server: the configured public URL, else the origin the bridge used. */
export function publicOrigin(context: AppContext, req: Request): string {
  return context.config.publicUrl?.replace(/\/+$/, "") ?? `${req.protocol}://${req.get("host")}`;
}

/**
 * Starting a pairing needs no credential, so the authenticator's per-credential limit does not
 * apply; this one, per client address, keeps anyone from filling the pairings table. Bridges
 * start a pairing once, then poll (which creates nothing).
 */
const PAIRING_STARTS = { perMinute: 60, burst: 60 };

export function runtimeHandlers(context: AppContext): RouteHandlers<keyof typeof runtimeRoutes> {
  context.maintenance.add("runtime.pairings.cleanup", () => deleteOldPairings(context));
  const webSessions = new WebSessions(context.db, context.config.publicUrl?.startsWith("https:") ?? false);
  const pairingStarts = context.shared.limiter("pairing-starts", PAIRING_STARTS);
  return {
    registerRuntimeEndpoint: async ({ input, principal }) => {
      const { endpoint, deviceToken, created: isNew } = await registerEndpoint(context, principal, input.body);
      const body = { success: true, endpoint, deviceToken };
      return isNew ? created(body) : body;
    },
    listRuntimeEndpoints: async ({ principal }) => ({ success: true, endpoints: await listEndpoints(context, principal.userId) }),
    runtimeEndpointHeartbeat: async ({ input, principal }) => {
      const { lastSeenAt } = await heartbeat(context, principal, input.params.id);
      return { success: true, endpointId: input.params.id, presence: "online", lastSeenAt };
    },
    revokeRuntimeEndpoint: async ({ input, principal }) => {
      const { revokedAt } = await revokeEndpoint(context, principal, input.params.id);
      return { success: true, endpointId: input.params.id, revokedAt };
    },
    registerRuntimeSession: async ({ input, principal }) => {
      const { session, created: isNew } = await registerSession(context, principal, input.body);
      const body = { success: true, sessionHandle: session.sessionHandle, session };
      return isNew ? created(body) : body;
    },
    updateRuntimeSession: async ({ input, principal }) => {
      const session = await updateSession(context, principal, input.params.handle, input.body);
      return { success: true, sessionHandle: session.sessionHandle, session };
    },
    setDefaultRoute: async ({ input, principal }) => ({
      success: true,
      ...(await setDefaultRoute(context, principal, input.body.endpointId, input.body.sessionHandle)),
    }),
    getDefaultRoute: async ({ principal }) => {
      const route = await getDefaultRoute(context, principal.userId);
      if (!route) throw noDefaultRoute();
      return { success: true, ...route };
    },
    clearDefaultRoute: async ({ principal }) => ({ success: true, cleared: await clearDefaultRoute(context, principal) }),
    whoami: ({ principal }) => ({
      success: true,
      principalId: String(principal.userId),
      userId: principal.userId,
      username: principal.username,
      credentialKind: principal.credential.kind,
      ...(principal.credential.kind === "device" ? { deviceId: principal.credential.deviceId, endpointId: principal.credential.id } : {}),
    }),
    pairStatus: async ({ input, principal }) => ({
      success: true,
      ...(await pairStatusAnswer(context, principal, input.query.principalId)),
    }),
    resolvePerson: async ({ input, principal }) => ({
      success: true,
      ...(await resolvePerson(context.db, principal.userId, input.query.handle)),
    }),
    startDeviceCode: async ({ input, req }) => {
      const retryAfter = await pairingStarts.take(`pairing-start:${req.ip}`);
      if (retryAfter !== null) throw tooManyRequests(retryAfter);
      const { purpose, ...device } = input.body;
      const started = await startPairing(context, device, purpose, { address: req.ip ?? null, agent: req.get("user-agent") ?? null });
      const approvalUrl = `${publicOrigin(context, req)}${API_BASE_PATH}/local-agent/pair?code=${started.userCode}`;
      return { success: true, ...started, approvalUrl, interval: POLL_INTERVAL_S };
    },
    approveDeviceCode: async ({ input, principal }) => ({
      success: true,
      ...(await decidePairing(context, principal, input.body.userCode, input.body.action)),
    }),
    pollDeviceCode: async ({ input }) => ({ success: true, ...(await pollPairing(context, input.body.pollToken)) }),
    devicePairingPage: async ({ input, req, res }) => {
      const pairing = input.query.code === undefined ? null : await findPairingByCode(context, input.query.code);
      const nonce = newNonce();
      const session = await webSessions.find(req);
      const page = renderPairingPage(pairing, nonce, context.clock.nowMs(), session);
      res
        .status(page.status)
        .set(pairingPageHeaders(nonce, session !== null))
        .send(page.html);
      return HANDLED;
    },
  };
}
