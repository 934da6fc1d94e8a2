import type { AuditEntry } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";

export interface AuditPage {
  entries: AuditEntry[];
  nextBefore: number | null;
}

/**
 * The audit entries a person may read: those naming them as a party or as the actor, newest
 * first. Ids only grow, so `before` (an entry id, exclusive) pages back without gaps or repeats
 * even while new entries arrive.
 */
export async function listAuditEntries(
  db: Kysely<Schema>,
  userId: number,
  page: { limit: number; before?: number | undefined },
): Promise<AuditPage> {
  const rows = await db
    .selectFrom("audit_log")
    .leftJoin("users", "users.id", "audit_log.actor_id")
    .select([
      "audit_log.id",
      "audit_log.actor_id",
      "audit_log.actor_credential",
      "audit_log.action",
      "audit_log.object_type",
      "audit_log.object_id",
      "audit_log.party_a",
      "audit_log.party_b",
      "audit_log.detail",
      "audit_log.created_at",
      "users.username",
    ])
    .where((eb) =>
      eb.or([eb("audit_log.party_a", "=", userId), eb("audit_log.party_b", "=", userId), eb("audit_log.actor_id", "=", userId)]),
    )
    .$if(page.before !== undefined, (q) => q.where("audit_log.id", "<", page.before as number))
    .orderBy("audit_log.id", "desc")
    // One more than asked tells whether another page exists.
    .limit(page.limit + 1)
    .execute();
  const more = rows.length > page.limit;
  const entries = rows.slice(0, page.limit).map(
    (row): AuditEntry => ({
      id: row.id,
      action: row.action,
      objectType: row.object_type,
      objectId: row.object_id,
      actor: {
        userId: row.actor_id === null ? null : String(row.actor_id),
        ...(row.username ? { username: row.username } : {}),
        credential: row.actor_credential,
      },
      parties: [row.party_a, row.party_b].filter((p): p is number => p !== null).map(String),
      detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
      createdAt: row.created_at,
    }),
  );
  return { entries, nextBefore: more ? (entries.at(-1)?.id ?? null) : null };
}
