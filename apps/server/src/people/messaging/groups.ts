import { MAX_GROUP_MEMBERS } from "@tandem/core";
import type { Kysely } from "kysely";
import { recordAudit } from "../../audit/audit-log";
import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError, badRequest, forbidden } from "../../http/errors";
import { type PersonRow, toNetworkPerson } from "../network/network-people";
import { areConnected } from "../network/permissions";
import { groupSummary } from "./group-summary";
import { activeMembership, findPerson, groupNotFound } from "./shared-conversations";

type Deps = Pick<AppContext, "db" | "clock" | "realtime">;

/** The group and the caller's active membership in it; a group they are not (or no longer) in is a 404. */
async function membershipOf(db: Kysely<Schema>, groupId: number, userId: number) {
  const group = await db
    .selectFrom("agent_conversations")
    .select("id")
    .where("id", "=", groupId)
    .where("kind", "=", "group")
    .executeTakeFirst();
  const membership = group ? await activeMembership(db, groupId, userId) : undefined;
  if (!membership) throw groupNotFound(groupId);
  return membership;
}

async function requireAdmin(db: Kysely<Schema>, groupId: number, userId: number): Promise<void> {
  const membership = await membershipOf(db, groupId, userId);
  if (membership.role !== "admin") throw forbidden("not_group_admin", `Only an admin of group ${groupId} may do that`);
}

/**
 * The people a list of handles names, each someone the caller is connected with (contacts, or
 * agent access either way): a group is not a way to reach strangers.
 */
async function resolveMembers(db: Kysely<Schema>, actor: UserPrincipal, handles: readonly string[]): Promise<PersonRow[]> {
  const people = new Map<number, PersonRow>();
  for (const handle of handles) {
    const person = await findPerson(db, handle);
    if (!person) throw new ApiError(404, "user_not_found", `No user "${handle}"`);
    if (person.id === actor.userId) continue;
    if (!(await areConnected(db, actor.userId, person.id))) {
      throw forbidden("not_connected", `You are not connected with ${person.username}; connect first (POST /network/request)`);
    }
    people.set(person.id, person);
  }
  return [...people.values()];
}

async function addMembers(tx: Kysely<Schema>, groupId: number, people: readonly PersonRow[], now: string): Promise<void> {
  for (const person of people) {
    await tx
      .insertInto("conversation_members")
      .values({ conversation_id: groupId, user_id: person.id, role: "member", joined_at: now })
      .onConflict((oc) =>
        // A former member comes back as a member; an active one stays as they are.
        oc
          .columns(["conversation_id", "user_id"])
          .doUpdateSet({ role: "member", joined_at: now, left_at: null })
          .where("conversation_members.left_at", "is not", null),
      )
      .execute();
  }
  const count = await tx
    .selectFrom("conversation_members")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("conversation_id", "=", groupId)
    .where("left_at", "is", null)
    .executeTakeFirstOrThrow();
  if (Number(count.n) > MAX_GROUP_MEMBERS) throw badRequest("group_full", `A group has at most ${MAX_GROUP_MEMBERS} members`);
}

export async function createGroup(deps: Deps, actor: UserPrincipal, name: string, handles: readonly string[]) {
  const people = await resolveMembers(deps.db, actor, handles);
  if (people.length === 0) throw badRequest("no_members", "Name at least one other person");
  const groupId = await deps.db.transaction().execute(async (tx) => {
    const now = deps.clock.iso();
    const row = await tx
      .insertInto("agent_conversations")
      .values({ owner_id: actor.userId, kind: "group", title: name, created_at: now, updated_at: now })
      .returning("id")
      .executeTakeFirstOrThrow();
    const id = Number(row.id);
    await tx
      .insertInto("conversation_members")
      .values({ conversation_id: id, user_id: actor.userId, role: "admin", joined_at: now })
      .execute();
    await addMembers(tx, id, people, now);
    await recordAudit(tx, deps.clock, {
      actor,
      action: "group.create",
      objectType: "group",
      objectId: id,
      parties: [actor.userId, ...people.map((p) => p.id)],
      detail: { name },
    });
    return id;
  });
  return groupSummary(deps.db, groupId, actor.userId);
}

export async function listGroups(db: Kysely<Schema>, userId: number) {
  const rows = await db
    .selectFrom("agent_conversations")
    .innerJoin("conversation_members", "conversation_members.conversation_id", "agent_conversations.id")
    .select("agent_conversations.id")
    .where("agent_conversations.kind", "=", "group")
    .where("conversation_members.user_id", "=", userId)
    .where("conversation_members.left_at", "is", null)
    .orderBy("agent_conversations.updated_at", "desc")
    .orderBy("agent_conversations.id", "desc")
    .limit(200)
    .execute();
  return Promise.all(rows.map((row) => groupSummary(db, Number(row.id), userId)));
}

export async function getGroup(db: Kysely<Schema>, groupId: number, userId: number) {
  await membershipOf(db, groupId, userId);
  return groupSummary(db, groupId, userId);
}

export async function renameGroup(deps: Deps, actor: UserPrincipal, groupId: number, name: string) {
  await requireAdmin(deps.db, groupId, actor.userId);
  await deps.db.updateTable("agent_conversations").set({ title: name, updated_at: deps.clock.iso() }).where("id", "=", groupId).execute();
  return groupSummary(deps.db, groupId, actor.userId);
}

export async function addGroupMembers(deps: Deps, actor: UserPrincipal, groupId: number, handles: readonly string[]) {
  await requireAdmin(deps.db, groupId, actor.userId);
  const people = await resolveMembers(deps.db, actor, handles);
  await deps.db.transaction().execute((tx) => addMembers(tx, groupId, people, deps.clock.iso()));
  return groupSummary(deps.db, groupId, actor.userId);
}

/**
 * Ends a membership. When the last admin goes while others stay, the longest-standing remaining
 * member becomes admin, so a group is never left without one. Answers that new admin, if any.
 */
async function endMembership(deps: Deps, groupId: number, userId: number): Promise<PersonRow | null> {
  return deps.db.transaction().execute(async (tx) => {
    const now = deps.clock.iso();
    await tx
      .updateTable("conversation_members")
      .set({ left_at: now, role: "member" })
      .where("conversation_id", "=", groupId)
      .where("user_id", "=", userId)
      .where("left_at", "is", null)
      .execute();
    const remaining = await tx
      .selectFrom("conversation_members")
      .innerJoin("users", "users.id", "conversation_members.user_id")
      .select(["users.id", "users.username", "users.name", "conversation_members.role"])
      .where("conversation_members.conversation_id", "=", groupId)
      .where("conversation_members.left_at", "is", null)
      .orderBy("conversation_members.joined_at")
      .orderBy("users.id")
      .execute();
    if (remaining.length === 0 || remaining.some((m) => m.role === "admin")) return null;
    const heir = remaining[0] as (typeof remaining)[number];
    await tx
      .updateTable("conversation_members")
      .set({ role: "admin" })
      .where("conversation_id", "=", groupId)
      .where("user_id", "=", Number(heir.id))
      .execute();
    return { id: Number(heir.id), username: heir.username, name: heir.name };
  });
}

export async function removeGroupMember(deps: Deps, actor: UserPrincipal, groupId: number, userId: number) {
  if (userId === actor.userId) {
    await leaveGroup(deps, actor, groupId);
    // The caller is no longer in it, so there is no group to show them.
    throw groupNotFound(groupId);
  }
  await requireAdmin(deps.db, groupId, actor.userId);
  if (!(await activeMembership(deps.db, groupId, userId))) {
    throw new ApiError(404, "member_not_found", `User ${userId} is not an active member of group ${groupId}`);
  }
  await endMembership(deps, groupId, userId);
  await recordAudit(deps.db, deps.clock, {
    actor,
    action: "group.member.remove",
    objectType: "group",
    objectId: groupId,
    parties: [actor.userId, userId],
  });
  return groupSummary(deps.db, groupId, actor.userId);
}

export async function leaveGroup(deps: Deps, actor: UserPrincipal, groupId: number) {
  await membershipOf(deps.db, groupId, actor.userId);
  const heir = await endMembership(deps, groupId, actor.userId);
  await recordAudit(deps.db, deps.clock, {
    actor,
    action: "group.leave",
    objectType: "group",
    objectId: groupId,
    parties: [actor.userId],
    detail: heir ? { newAdmin: heir.id } : undefined,
  });
  return { groupId, left: true as const, newAdmin: heir ? toNetworkPerson(heir) : null };
}

/** A group's messages after `after`, oldest first, for an active member. */
export async function groupMessagesAfter(db: Kysely<Schema>, userId: number, groupId: number, after: number, limit: number) {
  await membershipOf(db, groupId, userId);
  return db
    .selectFrom("agent_messages")
    .selectAll()
    .where("conversation_id", "=", groupId)
    .where("id", ">", after)
    .orderBy("id")
    .limit(limit)
    .execute();
}
