import { type DocumentRef, parseDocName, type Scope } from "@tandem/core";
import type { Principal } from "../auth/principal";
import type { DocumentAccess } from "./document-access";

const AREA_OF: Record<DocumentRef["kind"], "notes" | "todos"> = { workspace: "notes", note: "notes", todos: "todos" };

/**
 * What a credential itself allows on a document, before asking whose document it is. A person's
 * credentials sync, API keys and OAuth access tokens alike; a device token speaks for a bridge and
 * reaches its bridge routes, never the owner's notes. Either needs its area's read scope to open a
 * document and the write scope to change it, as on the REST routes (which take both, for either
 * audience an access token is minted for).
 */
export function credentialAccess(principal: Principal, documentName: string): DocumentAccess | null {
  const ref = parseDocName(documentName);
  if (!ref || principal.credential.kind === "device") return null;
  const area = AREA_OF[ref.kind];
  const { scopes } = principal.credential;
  if (!scopes.has(`os.${area}:read` as Scope)) return null;
  return scopes.has(`os.${area}:write` as Scope) ? "write" : "read";
}

/** Why a credential may not open a document: it is no credential that syncs, or not one for this document. */
export type AccessRefusal = "unauthorized" | "forbidden";

/** Thrown by `onAuthenticate`: Hocuspocus sends `reason` to the client with its refusal. */
export class AccessRefused extends Error {
  constructor(
    readonly reason: AccessRefusal,
    documentName: string,
  ) {
    super(`no access to ${documentName}`);
  }
}

/**
 * What the sockets a credential holds are counted under: the key, or the OAuth grant (an app's
 * access tokens change at each refresh, its grant does not). Null for what never syncs.
 */
export function credentialKey(principal: Principal): string | null {
  const { credential } = principal;
  return credential.kind === "device" ? null : `${credential.kind}:${credential.id}`;
}
