import { hasNote, parseDocName, workspaceDocName } from "@tandem/core";
import type * as Y from "yjs";

export type DocumentAccess = "write" | "read";

/** How access rules reach documents (the live copy if open), note ownership and what is shared with whom. */
export interface DocumentSource {
  getDoc(name: string): Promise<Y.Doc>;
  /** The owner of a note, if any workspace has listed it. */
  noteOwner(uuid: string): Promise<number | undefined>;
  /** Records `userId` as the owner of a note nobody owns yet; answers the owner either way. */
  claimNote(userId: number, uuid: string): Promise<number | undefined>;
  /** The role a user has on a note through a live share of a folder holding it, if any. */
  sharedNoteRole(userId: number, uuid: string): Promise<"editor" | "viewer" | undefined>;
}

/**
 * What a user may do with a document, or null for nothing. A user's own workspace and todos are
 * theirs. A note belongs to the user whose workspace listed it first (recorded by the server);
 * its owner may write it, and others only through a live share of a folder holding it, with the
 * share's role. Listing someone else's note uuid in one's own workspace grants nothing. A note
 * nobody owns yet is claimed here by the caller whose workspace lists it: an offline client that
 * has just created a note may open its document before the server has updated its views.
 */
export async function documentAccess(userId: number, documentName: string, source: DocumentSource): Promise<DocumentAccess | null> {
  const ref = parseDocName(documentName);
  if (!ref) return null;
  switch (ref.kind) {
    case "workspace":
    case "todos":
      return ref.userId === userId ? "write" : null;
    case "note": {
      let owner = await source.noteOwner(ref.uuid);
      if (owner === undefined && hasNote(await source.getDoc(workspaceDocName(userId)), ref.uuid)) {
        owner = await source.claimNote(userId, ref.uuid);
      }
      if (owner === userId) return "write";
      const shared = await source.sharedNoteRole(userId, ref.uuid);
      return shared === "editor" ? "write" : shared === "viewer" ? "read" : null;
    }
  }
}
