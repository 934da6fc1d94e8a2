import type { GrantRow } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import type { GrantsTable, Schema } from "../../db/schema";
import { notFound } from "../../http/errors";

/** A grant as stored. */
export type GrantRecord = Selectable<GrantsTable>;

/** The flat row bridges read; principal ids are strings on the wire. */
export function toGrantRow(grant: GrantRecord): GrantRow {
  return {
    commSessionId: grant.id,
    communicationSessionId: grant.id,
    requesterPrincipalId: String(grant.requester_id),
    requesterDeviceId: grant.requester_device_id,
    requesterReplyEndpointId: grant.requester_reply_endpoint_id,
    requesterReplySessionHandle: grant.requester_reply_session_handle,
    recipientPrincipalId: String(grant.recipient_id),
    targetKind: grant.target_kind,
    targetOfferId: grant.target_offer_id,
    frozenEndpointId: grant.frozen_endpoint_id,
    frozenSessionHandle: grant.frozen_session_handle,
    status: grant.status,
    requestedAt: grant.requested_at,
    requestExpiresAt: grant.request_expires_at,
    activatedAt: grant.activated_at,
    grantExpiresAt: grant.grant_expires_at,
    revokedAt: grant.revoked_at,
  };
}

/** The one 404 for a grant the caller may not see: it does not say whether the id exists. */
export const grantNotFound = (id: string) => notFound(`communication session ${id}`);

export function isGrantParty(grant: GrantRecord, userId: number): boolean {
  return grant.requester_id === userId || grant.recipient_id === userId;
}

export async function findGrant(db: Kysely<Schema>, id: string): Promise<GrantRecord | undefined> {
  return db.selectFrom("grants").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The grant, if `userId` is party to it; anyone else learns nothing, not even that it exists. */
export async function requireGrantParty(db: Kysely<Schema>, id: string, userId: number): Promise<GrantRecord> {
  const grant = await findGrant(db, id);
  if (!grant || !isGrantParty(grant, userId)) throw grantNotFound(id);
  return grant;
}

/**
 * Reads the grant and locks its row until the transaction ends (`select … for update`; SQLite,
 * whose writers are serialised, drops the clause). Everything that changes a grant or numbers its
 * messages goes through this first, so such changes never race. Lock order: a pair lock
 * (`lockPair`) before this, endpoint rows after.
 */
export async function lockGrant(tx: Kysely<Schema>, id: string): Promise<GrantRecord | undefined> {
  return tx.selectFrom("grants").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();
}
