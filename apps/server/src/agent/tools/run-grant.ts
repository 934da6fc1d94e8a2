import type { Scope } from "@tandem/core";

/** Who a run acts for. The owner's own chat, a contact's agent, a share-link guest, the heartbeat. */
export type RunCaller =
  | { readonly kind: "owner"; readonly apiKeyId: string | null }
  | { readonly kind: "contact"; readonly userId: number; readonly label: string }
  | { readonly kind: "guest"; readonly sessionId: string; readonly label: string }
  | { readonly kind: "heartbeat"; readonly tier: "MESSAGES" | "ACTIONS" };

/**
 * Everything a run may reach, fixed before the model sees a word. The toolset is built from
 * `scopes`; data tools also filter by `folders`, so nothing a prompt, message or model output says
 * can widen it.
 */
export interface RunGrant {
  /** Whose workspace the run works in. */
  readonly ownerId: number;
  readonly caller: RunCaller;
  readonly scopes: ReadonlySet<Scope>;
  /**
   * The owner's folders whose notes the run may see: `all` (the owner's own runs; they also see
   * folders others share with the owner and the notes at the root), or an explicit set with every
   * descendant already included, in which case shared folders are out of reach, and so are notes
   * at the root unless `rootNotes` says otherwise.
   */
  readonly folders: "all" | ReadonlySet<number>;
  /**
   * With a set of folders: the owner's notes at the root (in no folder) are in reach too. A share
   * link of scope `all` gives them, as it gives all the owner's notes but Memory (which is never at
   * the root); folder-scoped grants and contacts' grants do not.
   */
  readonly rootNotes?: boolean;
  /**
   * When set, only these tools (by name) exist in the run, even where the scopes allow more: a
   * contact whose permission lets them create todos holds `os.todos:write`, which would also
   * offer `complete_todo`. Narrows, never widens: a tool named here still needs its scopes.
   */
  readonly tools?: ReadonlySet<string>;
}

/** The owner's own run: everything the key's scopes allow. */
export function ownerGrant(ownerId: number, scopes: ReadonlySet<Scope>, apiKeyId: string | null): RunGrant {
  return { ownerId, caller: { kind: "owner", apiKeyId }, scopes, folders: "all" };
}

/** What a heartbeat may read on any tier: the owner's notes, snapshots, todos, memory and contacts. */
const HEARTBEAT_READ_SCOPES: readonly Scope[] = [
  "os.notes:read",
  "os.snapshots:read",
  "os.todos:read",
  "os.memory:read",
  "os.network:read",
];
/** What the ACTIONS tier adds: creating todos and notes, and writing memory. */
export const HEARTBEAT_ACTION_SCOPES: readonly Scope[] = ["os.notes:write", "os.todos:write", "os.memory:write"];

/**
 * The heartbeat's run: the owner's whole workspace, with the scopes of its tier. The tier decides
 * the toolset through the scopes, so a MESSAGES run has no tool that writes, whatever it is asked.
 * A run gets no scope its credential (`limit`) lacks: the key a manual run was asked with, or the
 * one that set the schedule of a scheduled run.
 */
export function heartbeatGrant(ownerId: number, tier: "MESSAGES" | "ACTIONS", limit?: ReadonlySet<Scope>): RunGrant {
  const scopes = tier === "ACTIONS" ? [...HEARTBEAT_READ_SCOPES, ...HEARTBEAT_ACTION_SCOPES] : HEARTBEAT_READ_SCOPES;
  return {
    ownerId,
    caller: { kind: "heartbeat", tier },
    scopes: new Set(scopes.filter((scope) => limit?.has(scope) ?? true)),
    folders: "all",
  };
}

/** Whether a note in `folderId` (null: the root) is within the grant. */
export function grantCoversFolder(grant: RunGrant, folderId: number | null): boolean {
  if (grant.folders === "all") return true;
  return folderId === null ? grant.rootNotes === true : grant.folders.has(folderId);
}
