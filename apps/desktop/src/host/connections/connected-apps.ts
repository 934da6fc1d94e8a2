import { z } from "zod";
import type { ConnectedAppItem } from "../../shared/desktop-api";
import type { ConnectionsFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import { connectionsCall, isObjectMissing, isRouteMissing, readAnswer } from "./connections-call";

// Core's `ConnectedApp` (`GET /account/connected-apps`), read leniently: the answer is not validated.
const AppShape = z.object({
  clientId: z.string(),
  clientName: z.string().nullable().optional(),
  scopes: z.array(z.string()).optional().default([]),
  grantedAt: z.string(),
  lastUsedAt: z.string().nullable().optional(),
  expiresAt: z.string().nullable().optional(),
});
const AppList = z.object({ apps: z.array(AppShape) });
const ClientIdInput = z.object({ clientId: z.string().min(1).max(200) });

export function connectedAppItem(app: z.output<typeof AppShape>): ConnectedAppItem {
  const name = app.clientName?.trim();
  return {
    clientId: app.clientId,
    name: name ? name : app.clientId,
    scopes: app.scopes,
    grantedAt: app.grantedAt,
    lastUsedAt: app.lastUsedAt ?? null,
    expiresAt: app.expiresAt ?? null,
  };
}

/** `GET /account/connected-apps`'s answer; exported for the tests. */
export function readConnectedApps(answer: unknown): ConnectedAppItem[] {
  return readAnswer(AppList, answer, "connected apps").apps.map(connectedAppItem);
}

export function createConnectedAppMethods(session: SessionService): Pick<ConnectionsFacet, "listConnectedApps" | "revokeConnectedApp"> {
  const signedIn = () => {
    const client = session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  return {
    async listConnectedApps() {
      const client = signedIn();
      try {
        return { supported: true, apps: readConnectedApps(await connectionsCall(() => client.call("listConnectedApps"))) };
      } catch (error) {
        if (isRouteMissing(error)) return { supported: false, apps: [] };
        throw error;
      }
    },

    async revokeConnectedApp(input) {
      const { clientId } = parseInput("revokeConnectedApp", ClientIdInput, input);
      const client = signedIn();
      await connectionsCall(() => client.call("revokeConnectedApp", { params: { clientId } })).catch((error: unknown) => {
        // Already gone (revoked elsewhere): what the owner asked for is done.
        if (isObjectMissing(error)) return;
        throw error;
      });
    },
  };
}
