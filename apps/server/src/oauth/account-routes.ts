import type { UserPrincipal } from "../auth/principal";
import type { AppContext } from "../context";
import { forbidden, notFound } from "../http/errors";
import type { RouteHandlers } from "../http/router";
import { announceAccessChange } from "../shared/access-changes";
import { listConnectedApps, revokeConnectedApp } from "./connected-apps";

/** An app must not see or disconnect the others: connected apps are managed with an API key (or in the browser). */
function requireApiKey(principal: UserPrincipal): void {
  if (principal.credential.kind !== "api_key") {
    throw forbidden("wrong_credential_type", "Connected apps are managed with an API key, not with an app's access token");
  }
}

export function accountHandlers(context: AppContext): RouteHandlers<"listConnectedApps" | "revokeConnectedApp"> {
  return {
    listConnectedApps: async ({ principal }) => {
      requireApiKey(principal);
      return { success: true, apps: await listConnectedApps(context.db, principal.userId) };
    },
    revokeConnectedApp: async ({ principal, input }) => {
      requireApiKey(principal);
      const revokedGrants = await revokeConnectedApp(context.db, principal.userId, input.params.clientId);
      if (revokedGrants === 0) throw notFound(`connected app ${input.params.clientId}`);
      // Its open sync sockets close now, here and on every other instance.
      await context.sync.connections.recheck();
      announceAccessChange(context.shared);
      return { success: true, clientId: input.params.clientId, revokedGrants };
    },
  };
}
