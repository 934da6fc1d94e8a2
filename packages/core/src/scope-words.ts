/**
 * Scopes in words, for people: the server's consent and account pages and the desktop's Connections
 * say what an app may do with these, one source so they never differ. Every scope the server
 * advertises has its words (oauth.test.ts checks).
 */
export const SCOPE_WORDS: Readonly<Record<string, string>> = {
  openid: "Know who you are (your user id)",
  profile: "See your name and username",
  email: "See your email address",
  offline_access: "Stay connected when you are away (refresh its access)",
  "os.status:read": "See the server's status",
  "os.notes:read": "Read your notes",
  "os.notes:write": "Create, change and delete your notes",
  "os.snapshots:read": "Read your notes' version history",
  "os.snapshots:write": "Save and restore versions of your notes",
  "os.todos:read": "Read your todos",
  "os.todos:write": "Create, change and complete your todos",
  "os.memory:read": "Search your memory",
  "os.memory:write": "Write to your memory",
  "os.raw-memory:read": "Read your raw memory's encrypted sessions and keys (ciphertext only: opening them needs an enrolled computer)",
  "os.raw-memory:write":
    "Enrol a computer for raw memory and upload encrypted sessions (giving it the key needs an enrolled computer or the recovery code)",
  "os.network:write": "Give people access to your agent, and change or withdraw it",
  "os.tools:read": "See your remote tool servers and use their read-only tools",
  "os.tools:write": "Add, sign in to and remove remote tool servers, and use all their tools",
  "os.network:read": "See your contacts, share links and visitors",
  "os.share:read": "See what you share",
  "os.share:write": "Share things on your behalf",
  "os.team:read": "See your team",
  "os.team:write": "Invite people to your team",
  // The heartbeat scopes are no access to notes, todos or memory (docs/agent.md, Tiers): say so.
  "os.heartbeat:read": "See your heartbeat's status, checklist and runs (what a run read, only where this app may read it too)",
  "os.heartbeat:run":
    "Run your heartbeat and set its tier and schedule (its runs read and write only what this app's other permissions allow; changing its checklist also needs permission to write your memory)",
  "os.heartbeat:write": "Nothing at present (no operation needs this permission)",
  "os.agents:read": "See your managed agents, their keys and their runs",
  "os.agents:write": "Create, change, pause and delete your managed agents, make and revoke their keys, and run them",
  "agent.message:send": "Send messages as you to people and groups",
  "net.contacts:manage": "Manage your contacts",
};

/** A scope in words; an unknown one (a newer server's) as its id. */
export function scopeInWords(scope: string): string {
  return Object.hasOwn(SCOPE_WORDS, scope) ? (SCOPE_WORDS[scope] as string) : scope;
}
