import { z } from "zod";
import { success } from "./common";
import { escalationRoutes } from "./escalations";
import { messageRequestRoutes, messagingRoutes } from "./messaging";
import { ContactRequestType, NetworkPerson, networkRoutes } from "./network";
import { defineRoute, type RouteDefinition } from "./route";

/**
 * `/net/...` is the canonical name of the network, messaging and permission routes: each alias
 * is the original route under another path, answered by the original's handler (the server
 * looks it up through `aliasOf`), so it validates, authorises and answers byte for byte alike.
 */
function alias<G extends Record<string, RouteDefinition>, Id extends keyof G & string, P extends string>(group: G, id: Id, path: P) {
  const original = group[id] as G[Id];
  return {
    ...original,
    path,
    category: "net",
    summary: `${original.summary} (the same as ${original.method} ${original.path})`,
    aliasOf: id,
  } as Omit<G[Id], "path" | "category" | "aliasOf"> & { readonly path: P; readonly category: "net"; readonly aliasOf: Id };
}

/** One line per alias: the group and id of the original, and the alias's path. */
export const netAliasRoutes = {
  netRequest: alias(networkRoutes, "networkRequest", "/net/request"),
  netListRequests: alias(networkRoutes, "networkListRequests", "/net/requests"),
  netContactsListRequests: alias(networkRoutes, "networkListRequests", "/net/contacts/requests"),
  netAccept: alias(networkRoutes, "networkAccept", "/net/accept"),
  netContactsAccept: alias(networkRoutes, "networkAccept", "/net/contacts/accept"),
  netWithdrawRequest: alias(networkRoutes, "networkWithdrawRequest", "/net/requests/:requestId"),
  netOverview: alias(networkRoutes, "networkOverview", "/net"),
  netUpdatePermissions: alias(networkRoutes, "networkUpdatePermissions", "/net/contacts/:userId/permissions"),
  netWithdrawPermissions: alias(networkRoutes, "networkWithdrawPermissions", "/net/contacts/:userId/permissions"),
  netRemoveContact: alias(networkRoutes, "networkRemoveContact", "/net/contacts/:userId"),
  netAgentMessage: alias(messagingRoutes, "agentMessage", "/net/message"),
  netMessageRequests: alias(messageRequestRoutes, "listMessageRequests", "/net/message/requests"),
  netAcceptMessageRequest: alias(messageRequestRoutes, "acceptMessageRequest", "/net/message/requests/:id/accept"),
  netIgnoreMessageRequest: alias(messageRequestRoutes, "ignoreMessageRequest", "/net/message/requests/:id/ignore"),
  netBlockMessageRequest: alias(messageRequestRoutes, "blockMessageRequest", "/net/message/requests/:id/block"),
  netListEscalations: alias(escalationRoutes, "listEscalations", "/net/escalations"),
  netGetEscalation: alias(escalationRoutes, "getEscalation", "/net/escalations/:id"),
  netResolveEscalation: alias(escalationRoutes, "resolveEscalation", "/net/escalations/:id/resolve"),
} as const;

export type NetAliasId = keyof typeof netAliasRoutes;

/**
 * Not an alias: the shape `net` clients read. A contact request whose answer says `requested`
 * (pending) or `approved` (they had already asked you, so you are contacts now).
 */
export const netRoutes = {
  netContactsRequest: defineRoute({
    method: "POST",
    path: "/net/contacts/request",
    category: "net",
    summary: "Ask someone for contact ('bob') or agent access ('bob_coo'); a reciprocal pending contact request is accepted at once",
    auth: "user",
    scope: "os.network:write",
    successStatuses: [201],
    body: networkRoutes.networkRequest.body,
    response: success({
      status: z.enum(["requested", "approved"]).describe("approved: they had already asked you, so you are contacts now"),
      requestId: z.number().int(),
      type: ContactRequestType,
      to: NetworkPerson,
      message: z.string(),
    }),
  }),
} as const;
