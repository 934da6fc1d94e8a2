import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** An app the user allowed through the OAuth consent page, and what it may do. */
export const ConnectedApp = z.object({
  clientId: z.string(),
  clientName: z.string().nullable(),
  scopes: z.array(z.string()).describe("what the user allowed, OpenID and API scopes together"),
  resources: z.array(z.string()).describe("where its access tokens are valid (the v1 base, the MCP endpoint)"),
  grantedAt: Timestamp,
  lastUsedAt: Timestamp.nullable().describe("last request with one of its access tokens (to the minute)"),
  expiresAt: Timestamp.nullable(),
});

export const accountRoutes = {
  listConnectedApps: defineRoute({
    method: "GET",
    path: "/account/connected-apps",
    category: "account",
    summary: "The apps connected to the caller's account through OAuth (API key only: an app cannot see the others)",
    auth: "user",
    response: success({ apps: z.array(ConnectedApp) }),
  }),
  revokeConnectedApp: defineRoute({
    method: "DELETE",
    path: "/account/connected-apps/:clientId",
    category: "account",
    summary: "Disconnect an app: its access and refresh tokens stop working at once (API key only)",
    auth: "user",
    params: z.object({ clientId: z.string().min(1).max(200) }),
    response: success({ clientId: z.string(), revokedGrants: z.number().int() }),
  }),
} as const;
