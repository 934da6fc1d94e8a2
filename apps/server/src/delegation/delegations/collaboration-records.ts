import { COLLABORATION_TTL_MINUTES, type Collaboration } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Clock } from "../../clock";
import type { Schema } from "../../db/schema";

/**
 * When a collaboration asked or allowed now runs out: 10 minutes for the owner to answer, and
 * again for the requester's bridge to collect an allowed one.
 */
export function collaborationExpiresAt(clock: Clock): string {
  return clock.isoIn(COLLABORATION_TTL_MINUTES * 60_000);
}

/** A delegation's optional context as stored (JSON text, null when none was given) … */
export function storeContext(context: unknown): string | null {
  return context === undefined ? null : JSON.stringify(context);
}

/** … and as read back; checked to be a JSON object before it was stored. */
export function readContext(stored: string | null): Record<string, unknown> | null {
  return stored === null ? null : (JSON.parse(stored) as Record<string, unknown>);
}

/** A collaboration with both people's usernames. */
export function selectCollaborations(db: Kysely<Schema>) {
  return db
    .selectFrom("collaborations as c")
    .innerJoin("users as r", "r.id", "c.requester_id")
    .innerJoin("users as t", "t.id", "c.target_id")
    .selectAll("c")
    .select(["r.username as requester_username", "t.username as target_username"]);
}

export type CollaborationRecord = NonNullable<Awaited<ReturnType<ReturnType<typeof selectCollaborations>["executeTakeFirst"]>>>;

export async function findCollaboration(db: Kysely<Schema>, id: string): Promise<CollaborationRecord | undefined> {
  return selectCollaborations(db).where("c.id", "=", id).executeTakeFirst();
}

export function toCollaboration(row: CollaborationRecord): Collaboration {
  return {
    collaborationId: row.id,
    status: row.status,
    answer: row.answer,
    requesterPrincipalId: String(row.requester_id),
    requesterUsername: row.requester_username,
    targetPrincipalId: String(row.target_id),
    targetUsername: row.target_username,
    clientMessageId: row.client_message_id,
    task: row.task,
    context: readContext(row.context),
    requestedTtlMinutes: row.requested_ttl_minutes,
    communicationSessionId: row.grant_id,
    messageId: row.message_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    resolvedAt: row.resolved_at,
  };
}
