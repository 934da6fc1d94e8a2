import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/** The most documents one page of the change feed names. */
export const MAX_DOCUMENT_CHANGES_PAGE = 2_000;

/** The most documents one pull asks for. */
export const MAX_PULL_DOCUMENTS = 500;
/** The longest state vector (base64) a pull may send for one document; a client exchanges a note with a longer one over sync. */
export const MAX_PULL_STATE_VECTOR = 8_192;

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
  pullDocuments: defineRoute({
    method: "POST",
    path: "/sync/pull",
    category: "sync",
    summary:
      "What the server holds of several of the caller's own note documents beyond the given state vectors, in one request: a sync client catching up on many closed notes (docs/sync.md)",
    auth: "user",
    scope: "os.notes:read",
    bodyLimit: 5 * 1024 * 1024,
    body: z.object({
      documents: z
        .array(
          z.object({
            name: z.string().max(200).describe("a document name, `note:<uuid>`"),
            stateVector: z
              .base64()
              .max(MAX_PULL_STATE_VECTOR)
              .optional()
              .describe("the Yjs state vector of the caller's copy (base64); omitted: the caller has nothing"),
          }),
        )
        .min(1)
        .max(MAX_PULL_DOCUMENTS),
    }),
    response: success({
      documents: z
        .array(
          z.object({
            name: z.string(),
            update: z.string().describe("a Yjs update (base64) with what the server holds beyond the state vector sent"),
            stateVector: z.string().describe("the server's state vector of the document (base64): what to send it, if anything"),
          }),
        )
        .describe("the documents served, in the order asked"),
      notServed: z
        .array(z.string())
        .describe(
          "documents this route does not answer for (not a note the caller owns, too large for this response, unreadable): exchange them over sync",
        ),
    }),
  }),
} as const;
