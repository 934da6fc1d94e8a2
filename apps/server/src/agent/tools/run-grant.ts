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
   * folders others share with the owner), or an explicit set with every descendant already
   * included, in which case notes at the root and shared folders are out of reach.
   */
  readonly folders: "all" | ReadonlySet<number>;
}

/** The owner's own run: everything the key's scopes allow. */
export function ownerGrant(ownerId: number, scopes: ReadonlySet<Scope>, apiKeyId: string | null): RunGrant {
  return { ownerId, caller: { kind: "owner", apiKeyId }, scopes, folders: "all" };
}

/** Whether a note in `folderId` (null: the root) is within the grant. */
export function grantCoversFolder(grant: RunGrant, folderId: number | null): boolean {
  if (grant.folders === "all") return true;
  return folderId !== null && grant.folders.has(folderId);
}
