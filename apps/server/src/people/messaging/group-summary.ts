import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { toNetworkPerson } from "../network/network-people";

// Apart from groups.ts because conversation listings show groups too, and groups.ts depends on the
// conversation helpers that depend on those listings.

/** A group as the API shows it, from the caller's side. */
export async function groupSummary(db: Kysely<Schema>, groupId: number, viewerId: number) {
  const group = await db
    .selectFrom("agent_conversations")
    .selectAll()
    .where("id", "=", groupId)
    .where("kind", "=", "group")
    .executeTakeFirstOrThrow();
  const members = await db
    .selectFrom("conversation_members")
    .innerJoin("users", "users.id", "conversation_members.user_id")
    .select(["users.id", "users.username", "users.name", "conversation_members.role", "conversation_members.joined_at"])
    .where("conversation_members.conversation_id", "=", groupId)
    .where("conversation_members.left_at", "is", null)
    .orderBy("conversation_members.joined_at")
    .orderBy("users.id")
    .execute();
  const viewer = members.find((m) => Number(m.id) === viewerId);
  return {
    id: Number(group.id),
    name: group.title,
    role: viewer?.role ?? ("member" as const),
    members: members.map((m) => ({
      ...toNetworkPerson({ id: Number(m.id), username: m.username, name: m.name }),
      role: m.role,
      joinedAt: m.joined_at,
    })),
    createdAt: group.created_at,
    updatedAt: group.updated_at,
  };
}
