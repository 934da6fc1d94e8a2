import type { Collaboration } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";

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
    context: row.context === null ? null : (JSON.parse(row.context) as Record<string, unknown>),
    requestedTtlMinutes: row.requested_ttl_minutes,
    communicationSessionId: row.grant_id,
    messageId: row.message_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    resolvedAt: row.resolved_at,
  };
}
