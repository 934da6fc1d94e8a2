import { openApiPath, type RouteDefinition, routes, todosDocName, workspaceDocName } from "@tandem/core";
import type { Credential } from "../auth/principal";
import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";
import { clientNames } from "../oauth/connected-apps";
import { getUser } from "../people/users/users-service";
import { SYNC_PATH } from "../sync/sync-server";
import { ensureGeneralFolder } from "./folders/folders-service";
import { workspaceTotals } from "./notes/notes-stats";

type WorkspaceRouteId = "init" | "identity" | "discovery" | "status";

/** `GET /os`: the route table, grouped by category; generated so it can never drift. */
function discovery() {
  const byCategory: Record<string, { method: string; path: string; summary: string }[]> = {};
  const all = Object.values(routes) as RouteDefinition[];
  for (const route of all) {
    const entries = byCategory[route.category] ?? [];
    byCategory[route.category] = entries;
    entries.push({ method: route.method, path: openApiPath(route.path), summary: route.summary });
  }
  return {
    success: true as const,
    description: "Tandem v1 API: workspace (notes, folders, todos, snapshots) and delegation (runtime endpoints, grants, approvals)",
    totalEndpoints: all.length,
    byCategory,
  };
}

export function workspaceHandlers({ db, sync }: AppContext): RouteHandlers<WorkspaceRouteId> {
  const summary = async (userId: number) => {
    const { folders, totalFiles, totalSizeBytes } = await workspaceTotals(db, userId);
    return { folders, totalFiles, totalSizeBytes };
  };
  const listing = discovery();

  /** The credential as it is: its kind, what it may do, and for an OAuth token the app it was given to. */
  async function describeCredential(credential: Credential) {
    switch (credential.kind) {
      case "api_key":
        return { type: "api_key" as const, id: credential.id, label: credential.label, scopes: [...credential.scopes].sort(), app: null };
      case "oauth": {
        const name = (await clientNames(db, [credential.clientId])).get(credential.clientId) ?? null;
        // Every scope the grant gave (OpenID and agent.message:send too): all of them are enforced.
        const scopes = [...credential.grantedScopes].sort();
        return { type: "oauth_token" as const, id: credential.id, label: name, scopes, app: { clientId: credential.clientId, name } };
      }
      case "device":
        // A device token has no scopes: it reaches only the bridge routes of its own endpoint.
        return { type: "device_token" as const, id: credential.id, label: null, scopes: [], app: null };
    }
  }
  return {
    init: async ({ principal, req }) => {
      const created = await ensureGeneralFolder(sync, principal.userId);
      return {
        success: true,
        initialized: true,
        created,
        workspace: await summary(principal.userId),
        sync: {
          // The address the client used to reach us is the one it can reach the sync hub at.
          url: `${req.protocol === "https" ? "wss" : "ws"}://${req.get("host") ?? "localhost"}${SYNC_PATH}`,
          workspaceDoc: workspaceDocName(principal.userId),
          todosDoc: todosDocName(principal.userId),
        },
      };
    },
    identity: async ({ principal }) => {
      const user = await getUser(db, principal.userId);
      const { credential } = principal;
      const person = { userId: user.id, username: user.username, name: user.name, email: user.email };
      return {
        success: true,
        userId: user.id,
        principalId: String(user.id),
        username: user.username,
        name: user.name,
        email: user.email,
        createdAt: user.createdAt,
        // Agent skills read the person from `profile` or `identity` (agent-supplement.md).
        profile: person,
        identity: person,
        credential: await describeCredential(credential),
      };
    },
    discovery: () => listing,
    status: async ({ principal }) => {
      const totals = await workspaceTotals(db, principal.userId);
      return {
        success: true,
        contextCount: totals.totalFiles,
        totalSizeBytes: totals.totalSizeBytes,
        folders: totals.folders,
        lastSyncedAt: totals.lastUpdatedAt,
      };
    },
  };
}
