import { hasNote, parseDocName, workspaceDocName } from "@tandem/core";
import type * as Y from "yjs";

export type DocumentAccess = "write" | "read";

/** How access rules reach documents (the live copy if open) and what is shared with whom. */
export interface DocumentSource {
  getDoc(name: string): Promise<Y.Doc>;
  /** The role a user has on a note through a shared folder, if any. */
  sharedNoteRole(userId: number, uuid: string): Promise<"editor" | "viewer" | undefined>;
}

/**
 * What a user may do with a document, or null for nothing. A user's own workspace and todos are
 * theirs; a note is theirs when their workspace lists it (which also covers a note an offline
 * client has just created), and readable or writable when it sits in a folder shared with them.
 */
export async function documentAccess(userId: number, documentName: string, source: DocumentSource): Promise<DocumentAccess | null> {
  const ref = parseDocName(documentName);
  if (!ref) return null;
  switch (ref.kind) {
    case "workspace":
    case "todos":
      return ref.userId === userId ? "write" : null;
    case "note": {
      const workspace = await source.getDoc(workspaceDocName(userId));
      if (hasNote(workspace, ref.uuid)) return "write";
      const shared = await source.sharedNoteRole(userId, ref.uuid);
      return shared === "editor" ? "write" : shared === "viewer" ? "read" : null;
    }
  }
}
