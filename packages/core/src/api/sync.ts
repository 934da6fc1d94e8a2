import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** The most documents one page of the change feed names. */
export const MAX_DOCUMENT_CHANGES_PAGE = 2_000;

/** A place in the change feed: after the document `after`, stored at `since`. */
export const DocumentChangesPosition = z.object({
  since: Timestamp,
  after: z.string(),
});
export type DocumentChangesPosition = z.infer<typeof DocumentChangesPosition>;

export const syncRoutes = {
  documentChanges: defineRoute({
    method: "GET",
    path: "/sync/changes",
    category: "sync",
    summary:
      "Which of the caller's note documents were stored at or after a time: a sync client that keeps documents closed catches up on these (docs/sync.md)",
    auth: "user",
    scope: "os.notes:read",
    query: z.object({
      since: z.iso.datetime().optional().describe("changes stored at or after this time; omitted: every note document"),
      after: z.string().max(200).optional().describe("with `since`: skip documents named up to this one at exactly `since` (paging)"),
      limit: z.coerce.number().int().min(1).max(MAX_DOCUMENT_CHANGES_PAGE).default(MAX_DOCUMENT_CHANGES_PAGE),
    }),
    response: success({
      documents: z.array(z.string()).describe("document names (`note:<uuid>`), oldest change first"),
      position: DocumentChangesPosition.nullable().describe(
        "right after the last document named; pass as `since` and `after` for the next page (null when none was named)",
      ),
      more: z.boolean().describe("true when a next page may name more documents"),
    }),
  }),
} as const;
