/** The scopes clients may ask for (the agent supplement's list), besides the OpenID ones. */
export const RESOURCE_SCOPES = [
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

export const OPENID_SCOPES = ["openid", "profile", "email", "offline_access"] as const;
