import { ManagedAgentGrant, type Scope } from "@tandem/core";

const NO_ACCESS: ManagedAgentGrant = {
  notesAccess: { scope: "none", folderIds: [], access: "read" },
  todoAccess: { read: false, create: false },
};

/** A stored agent grant (JSON); a damaged one grants nothing rather than failing the request. */
export function parseAgentGrant(stored: string): ManagedAgentGrant {
  try {
    const parsed = ManagedAgentGrant.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data : NO_ACCESS;
  } catch {
    return NO_ACCESS;
  }
}

/**
 * What a managed agent's key may call on the v1 API: its grant, as far as a route can honour it.
 * - `os.agents:read|write`: the managed-agents routes, which let an agent reach only itself, and
 *   only to read itself and its runs and to run itself (never keys, agents or its own grant).
 * - `os.todos:read` with `todoAccess.read`. Creating todos is not given on REST: `os.todos:write`
 *   would also complete and delete them, which the grant does not say; its runs can create them.
 * - No notes scope: the notes routes cannot narrow to the grant's folders nor keep Memory out,
 *   so an agent reaches notes only through its runs, where both hold.
 */
export function agentKeyScopes(stored: string): ReadonlySet<Scope> {
  const grant = parseAgentGrant(stored);
  const scopes = new Set<Scope>(["os.agents:read", "os.agents:write"]);
  if (grant.todoAccess.read) scopes.add("os.todos:read");
  return scopes;
}
