import type { Kysely } from "kysely";
import type { Principal } from "../auth/principal";
import type { Clock } from "../clock";
import type { Schema } from "../db/schema";

/** Who made a change: a person through a credential, a pairing poll, or the server's own timers. */
export type AuditActor = Principal | "system";

export interface AuditEntry {
  actor: AuditActor;
  /** `grant.accept`, `endpoint.register`, `approval.resolve`, … */
  action: string;
  objectType: string;
  objectId: string | number;
  /** The people the change concerns (at most two); each may read the entry. */
  parties: readonly (number | null | undefined)[];
  detail?: Record<string, unknown>;
}

export function credentialLabel(actor: AuditActor): string {
  return actor === "system" ? "system" : `${actor.credential.kind}:${actor.credential.id}`;
}

/**
 * Records one state change. Call it inside the transaction that makes the change, so the change
 * and its record commit together or not at all.
 */
export async function recordAudit(db: Kysely<Schema>, clock: Clock, entry: AuditEntry): Promise<void> {
  const parties = [...new Set(entry.parties.filter((p): p is number => typeof p === "number"))];
  await db
    .insertInto("audit_log")
    .values({
      actor_id: entry.actor === "system" ? null : entry.actor.userId,
      actor_credential: credentialLabel(entry.actor),
      action: entry.action,
      object_type: entry.objectType,
      object_id: String(entry.objectId),
      party_a: parties[0] ?? null,
      party_b: parties[1] ?? null,
      detail: entry.detail ? JSON.stringify(entry.detail) : null,
      created_at: clock.iso(),
    })
    .execute();
}
