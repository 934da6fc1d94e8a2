import type { AppContext } from "../context";
import type { RouteHandlers } from "../http/router";
import { documentChanges } from "./document-changes";

export function syncHandlers({ db }: AppContext): RouteHandlers<"documentChanges"> {
  return {
    documentChanges: async ({ principal, input }) => ({ success: true, ...(await documentChanges(db, principal.userId, input.query)) }),
  };
}
