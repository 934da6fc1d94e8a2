import { type DocumentRef, parseDocName, type Scope } from "@tandem/core";
import type { Principal } from "../auth/principal";
import type { DocumentAccess } from "./document-access";

const AREA_OF: Record<DocumentRef["kind"], "notes" | "todos"> = { workspace: "notes", note: "notes", todos: "todos" };

/**
 * What a credential itself allows on a document, before asking whose document it is. Only user
 * keys sync: a device token speaks for a bridge and reaches its bridge routes, never the owner's
 * notes. A key needs its area's read scope to open a document and the write scope to change it,
 * as on the REST routes.
 */
export function credentialAccess(principal: Principal, documentName: string): DocumentAccess | null {
  const ref = parseDocName(documentName);
  if (!ref || principal.credential.kind !== "api_key") return null;
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
