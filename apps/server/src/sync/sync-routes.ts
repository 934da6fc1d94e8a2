import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";
import { documentChanges } from "./document-changes";
import { pullDocuments } from "./document-pull";

export function syncHandlers({ db, sync }: AppContext): RouteHandlers<"documentChanges" | "pullDocuments"> {
  const source = { db, liveDocument: (name: string) => sync.hocuspocus.documents.get(name) };
  return {
    pullDocuments: async ({ principal, input }) => ({ success: true, ...(await pullDocuments(source, principal, input.body.documents)) }),
    documentChanges: async ({ principal, input }) => ({ success: true, ...(await documentChanges(db, principal.userId, input.query)) }),
  };
}
