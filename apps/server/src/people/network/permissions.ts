import { type Kysely, type SqlBool, sql } from "kysely";
import type { Schema } from "../../db/schema";
import { forbidden } from "../../http/errors";

/**
 * SQL: the row of `table` (contacts or agent permissions) is the owner's own decision, or was made
 * by a share link that is still live at `now`. A revoked link's rows are deleted with it; this
 * covers the time between a link's expiry and the sweep that deletes its rows.
 */
export function fromLiveOrigin(table: "contacts" | "contact_permissions", now: string) {
  const link = sql.ref(`${table}.share_link_id`);
  return sql<SqlBool>`(${link} is null or exists (select 1 from share_links where share_links.id = ${link} and share_links.revoked_at is null and (share_links.expires_at is null or share_links.expires_at > ${now})))`;
}

/**
 * Whether `grantorId` has given `granteeId`'s agent access (an accepted agent request). This is
 * what a grant from grantee to grantor needs; nothing a message says can stand in for it. A
 * permission born of a share link is not one: it reaches only what the link's guests reach (agent
 * RPC, see `usableContactPermission`), never the owner's runtime.
 */
export async function hasAgentPermission(db: Kysely<Schema>, grantorId: number, granteeId: number): Promise<boolean> {
  const row = await db
    .selectFrom("contact_permissions")
    .select("grantor_id")
    .where("grantor_id", "=", grantorId)
    .where("grantee_id", "=", granteeId)
    .where("share_link_id", "is", null)
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

/**
 * Whether two people are contacts (an accepted friend request; the rows go both ways). Contacts
 * made by redeeming a share link do not count: a link's guests talk to the owner's agent only.
 */
export async function areFriends(db: Kysely<Schema>, a: number, b: number): Promise<boolean> {
  const row = await db
    .selectFrom("contacts")
    .select("user_id")
    .where("user_id", "=", a)
    .where("contact_id", "=", b)
    .where("share_link_id", "is", null)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether two people are connected at all: friends, or an agent permission either way (not by a share link). */
export async function areConnected(db: Kysely<Schema>, a: number, b: number): Promise<boolean> {
  if (a === b) return false;
  if (await areFriends(db, a, b)) return true;
  const permission = await db
    .selectFrom("contact_permissions")
    .select("grantor_id")
    .where("share_link_id", "is", null)
    .where((eb) =>
      eb.or([eb.and([eb("grantor_id", "=", a), eb("grantee_id", "=", b)]), eb.and([eb("grantor_id", "=", b), eb("grantee_id", "=", a)])]),
    )
    .executeTakeFirst();
  return permission !== undefined;
}
