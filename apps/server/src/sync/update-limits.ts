import type { Extension } from "@hocuspocus/server";
import { MAX_TYPE_DEPTH } from "@tandem/core";
import type { Logger } from "pino";
import { retryLaterOnOutage } from "./retry-later";
import type { StorageQuota } from "./storage-quota";
import { UNKNOWN_PARENT, updateDepth } from "./update-depth";

/** y-protocols' sync message types; the first carries a state vector, the others an update. */
const SYNC_STEP_1 = 0;

/**
 * A Yjs update that carries nothing (no structs, no deletions): what a client whose document has
 * nothing the server lacks answers the server's state vector with, as every provider opening a
 * document does.
 */
function isEmptyUpdate(payload: Uint8Array): boolean {
  return payload.length === 2 && payload[0] === 0 && payload[1] === 0;
}

/**
 * Why an update was refused. When a hook throws, Hocuspocus closes that document's connection
 * with a Close message carrying the error's `reason` (the code does not reach the client).
 */
export type RefusalReason = "document_too_large" | "storage_quota_exceeded" | "too_deeply_nested" | "unknown_parent";

class UpdateRefused extends Error {
  constructor(readonly reason: RefusalReason) {
    super(reason);
  }
}

/**
 * Checks every update a sync client sends before it touches the document: no larger than a
 * document may be, no types nested deeper than {@link MAX_TYPE_DEPTH}, nothing attached to
 * content the server does not have (Yjs would hold it pending and integrate it later, unchecked),
 * and within the document's size limit and its owner's quota. A refused update is not applied
 * and its connection is closed with a reason saying why; the client must drop the change.
 */
export function updateLimits(quota: StorageQuota, logger: Logger): Extension {
  return {
    beforeSync: async ({ type, payload, document, documentName, context, connection }) => {
      // Hocuspocus drops a read-only connection's updates unapplied; they must not count either.
      // An empty update changes nothing and grows nothing: no owner or quota to look up for it (opening
      // many documents at once would otherwise queue a usage sum per document behind the database).
      if (type === SYNC_STEP_1 || connection.readOnly || isEmptyUpdate(payload)) return;
      const refuse = (reason: RefusalReason) => {
        logger.warn({ document: documentName, userId: context?.userId, bytes: payload.length, reason }, "sync update refused");
        return new UpdateRefused(reason);
      };
      if (payload.length > quota.limits.maxDocumentBytes) throw refuse("document_too_large");
      const depth = updateDepth(document, payload);
      if (depth === UNKNOWN_PARENT) throw refuse("unknown_parent");
      if (depth > MAX_TYPE_DEPTH) throw refuse("too_deeply_nested");
      // A quota that cannot be read (the database unreachable) refuses nothing: the client comes back later.
      const { owner, refusal } = await retryLaterOnOutage(context, async () => {
        const owner = await quota.ownerOf(documentName);
        return { owner, refusal: await quota.refusal(documentName, owner, payload.length) };
      });
      if (refusal) throw refuse(refusal);
      quota.grew(documentName, owner, payload.length);
    },
    afterUnloadDocument: async ({ documentName }) => quota.forget(documentName),
  };
}
