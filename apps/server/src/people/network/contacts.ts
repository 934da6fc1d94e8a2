import type { ContactPermissions, NetworkContact } from "@tandem/core";
import type { Kysely } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { endGrantsBetween, inWriteUnit } from "../../delegation/grants";
import { ApiError } from "../../http/errors";
import { loadPeople } from "./network-people";
import { lockPair } from "./pair-lock";
import { fromLiveOrigin } from "./permissions";

type Deps = Pick<AppContext, "db" | "database" | "clock">;

interface Connection {
  friendSince?: string;
  /** What they gave me. */
  theirs?: { permissions: ContactPermissions; since: string };
  /** What I gave them. */
  yours?: { permissions: ContactPermissions; since: string };
}

/**
 * Which way agent requests can flow, from the caller's side: `outbound` when only they gave the
 * caller agent access (the caller's agent can reach them), `inbound` when only the caller gave
 * them access, `mutual` when both did or when the two are contacts (friends).
 */
function directionOf(connection: Connection): NetworkContact["direction"] {
  if (connection.friendSince !== undefined || (connection.theirs && connection.yours)) return "mutual";
  return connection.theirs ? "outbound" : "inbound";
}

/**
 * Everyone the caller is connected to: contacts (friends) and agent access either way, those made
 * by a share link while the link is live (`now`).
 */
export async function listContacts(db: Kysely<Schema>, userId: number, now: string): Promise<NetworkContact[]> {
  const [friends, given, received] = await Promise.all([
    db
      .selectFrom("contacts")
      .select(["contact_id", "created_at"])
      .where("user_id", "=", userId)
      .where(fromLiveOrigin("contacts", now))
      .execute(),
    db
      .selectFrom("contact_permissions")
      .select(["grantee_id", "permissions", "created_at"])
      .where("grantor_id", "=", userId)
      .where(fromLiveOrigin("contact_permissions", now))
      .execute(),
    db
      .selectFrom("contact_permissions")
      .select(["grantor_id", "permissions", "created_at"])
      .where("grantee_id", "=", userId)
      .where(fromLiveOrigin("contact_permissions", now))
      .execute(),
  ]);
  const connections = new Map<number, Connection>();
  const connection = (id: number) => {
    const found = connections.get(id) ?? {};
    connections.set(id, found);
    return found;
  };
  for (const row of friends) connection(row.contact_id).friendSince = row.created_at;
  for (const row of given) connection(row.grantee_id).yours = { permissions: JSON.parse(row.permissions), since: row.created_at };
  for (const row of received) connection(row.grantor_id).theirs = { permissions: JSON.parse(row.permissions), since: row.created_at };

  const people = await loadPeople(db, connections.keys());
  const contacts: NetworkContact[] = [];
  for (const [id, found] of connections) {
    const person = people.get(id);
    if (!person) continue;
    const times = [found.friendSince, found.theirs?.since, found.yours?.since].filter((t): t is string => t !== undefined);
    contacts.push({
      ...person,
      direction: directionOf(found),
      friend: found.friendSince !== undefined,
      theirPermissionsToYou: found.theirs?.permissions ?? null,
      yourPermissionsToThem: found.yours?.permissions ?? null,
      since: times.sort()[0] as string,
    });
  }
  return contacts.sort((a, b) => a.username.localeCompare(b.username));
}

const noPermission = (userId: number) =>
  new ApiError(404, "permission_not_found", `You have not given user ${userId} agent access (accept their agent request first)`);

/**
 * Replaces what a person's agent may reach of the caller's; they must already have access. One
 * born of a share link stays bound to that link (never more than its guests reach, ending with it).
 */
export async function updatePermissions(
  deps: Deps,
  actor: Principal,
  granteeId: number,
  permissions: ContactPermissions,
): Promise<{ permissions: ContactPermissions; updatedAt: string }> {
  return deps.db.transaction().execute(async (tx) => {
    await lockPair(tx, deps.database.dialect, actor.userId, granteeId);
    const updatedAt = deps.clock.iso();
    const updated = await tx
      .updateTable("contact_permissions")
      .set({ permissions: JSON.stringify(permissions), updated_at: updatedAt })
      .where("grantor_id", "=", actor.userId)
      .where("grantee_id", "=", granteeId)
      .where(fromLiveOrigin("contact_permissions", updatedAt))
      .returning("grantee_id")
      .executeTakeFirst();
    if (!updated) throw noPermission(granteeId);
    await recordAudit(tx, deps.clock, {
      actor,
      action: "network.permissions.update",
      objectType: "contact_permission",
      objectId: `${actor.userId}:${granteeId}`,
      parties: [actor.userId, granteeId],
      detail: { permissions },
    });
    return { permissions, updatedAt };
  });
}

/**
 * Withdraws the agent access the caller gave `granteeId`. The grants from them to the caller
 * rested on it, so they are revoked in the same commit (their open deliveries with them, and
 * both sides hear `grant.revoked`): after this answer nothing of theirs reaches the caller's
 * agent. Answers the ids of the grants ended.
 */
export async function withdrawPermission(context: AppContext, actor: Principal, granteeId: number): Promise<string[]> {
  return inWriteUnit(context, undefined, async (unit) => {
    await lockPair(unit.tx, context.database.dialect, actor.userId, granteeId);
    const deleted = await unit.tx
      .deleteFrom("contact_permissions")
      .where("grantor_id", "=", actor.userId)
      .where("grantee_id", "=", granteeId)
      .returning("grantee_id")
      .executeTakeFirst();
    if (!deleted) throw noPermission(granteeId);
    await recordAudit(unit.tx, context.clock, {
      actor,
      action: "network.permissions.withdraw",
      objectType: "contact_permission",
      objectId: `${actor.userId}:${granteeId}`,
      parties: [actor.userId, granteeId],
    });
    return endGrantsBetween(context, { requesterId: granteeId, recipientId: actor.userId }, actor, unit);
  });
}

/** Stops two people being contacts (both rows). Agent permissions are separate and stay. */
export async function removeContact(deps: Deps, actor: Principal, contactId: number): Promise<void> {
  await deps.db.transaction().execute(async (tx) => {
    await lockPair(tx, deps.database.dialect, actor.userId, contactId);
    const result = await tx
      .deleteFrom("contacts")
      .where((eb) =>
        eb.or([
          eb.and([eb("user_id", "=", actor.userId), eb("contact_id", "=", contactId)]),
          eb.and([eb("user_id", "=", contactId), eb("contact_id", "=", actor.userId)]),
        ]),
      )
      .executeTakeFirst();
    if (result.numDeletedRows === 0n) throw new ApiError(404, "contact_not_found", `User ${contactId} is not one of your contacts`);
    await recordAudit(tx, deps.clock, {
      actor,
      action: "network.contact.remove",
      objectType: "contact",
      objectId: `${actor.userId}:${contactId}`,
      parties: [actor.userId, contactId],
    });
  });
}
