import { ALL_SCOPES } from "@tandem/core";

/** The agent supplement's list: what existing OAuth clients ask for. */
const SUPPLEMENT_SCOPES = [
  "os.status:read",
  "os.notes:read",
  "os.notes:write",
  "os.snapshots:read",
  "os.snapshots:write",
  "os.todos:read",
  "os.todos:write",
  "os.memory:read",
  "os.network:read",
  "os.share:read",
  "os.share:write",
  "os.team:read",
  "os.team:write",
  "os.heartbeat:read",
  "os.heartbeat:run",
  "agent.message:send",
  "net.contacts:manage",
] as const;

/**
 * The scopes clients may ask for, besides the OpenID ones: the supplement's list, and every scope an
 * API key may hold, so an app signed in with OAuth can be given whatever a key could.
 */
export const RESOURCE_SCOPES: readonly string[] = [...new Set<string>([...SUPPLEMENT_SCOPES, ...ALL_SCOPES])];

export const OPENID_SCOPES = ["openid", "profile", "email", "offline_access"] as const;
