import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import { forbidden } from "../http/errors";

/**
 * Whether `grantorId` has given `granteeId`'s agent access (an accepted agent request). This is
 * what a grant from grantee to grantor needs; nothing a message says can stand in for it.
 */
export async function hasAgentPermission(db: Kysely<Schema>, grantorId: number, granteeId: number): Promise<boolean> {
  const row = await db
    .selectFrom("contact_permissions")
    .select("grantor_id")
    .where("grantor_id", "=", grantorId)
    .where("grantee_id", "=", granteeId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * A grant or delegation from `granteeId` to `grantorId` goes ahead only with the permission:
 * else 403 `agent_permission_required`.
 */
export async function requireAgentPermission(db: Kysely<Schema>, grantorId: number, granteeId: number): Promise<void> {
  if (!(await hasAgentPermission(db, grantorId, granteeId))) {
    throw forbidden("agent_permission_required", "This person has not given you agent access; ask them first (POST /network/request)");
  }
}

/** Whether two people are contacts (an accepted friend request; the rows go both ways). */
export async function areFriends(db: Kysely<Schema>, a: number, b: number): Promise<boolean> {
  const row = await db.selectFrom("contacts").select("user_id").where("user_id", "=", a).where("contact_id", "=", b).executeTakeFirst();
  return row !== undefined;
}

/** Whether two people are connected at all: friends, or an agent permission either way. */
export async function areConnected(db: Kysely<Schema>, a: number, b: number): Promise<boolean> {
  if (a === b) return false;
  if (await areFriends(db, a, b)) return true;
  const permission = await db
    .selectFrom("contact_permissions")
    .select("grantor_id")
    .where((eb) =>
      eb.or([eb.and([eb("grantor_id", "=", a), eb("grantee_id", "=", b)]), eb.and([eb("grantor_id", "=", b), eb("grantee_id", "=", a)])]),
    )
    .executeTakeFirst();
  return permission !== undefined;
}
