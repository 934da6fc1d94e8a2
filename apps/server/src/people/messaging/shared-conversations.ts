import type { Kysely, Selectable } from "kysely";
import { messageJson, shownTo } from "../../agent/conversations/conversation-listing";
import type { MessageRow } from "../../agent/conversations/conversation-store";
import type { AppContext } from "../../context";
import type { AgentConversationsTable, ConversationMembersTable, Schema } from "../../db/schema";
import { ApiError, notFound } from "../../http/errors";
import { enqueueWebhookEvent, summarize } from "../../webhooks/webhook-outbox";
import type { PersonRow } from "../network/network-people";

type Deps = Pick<AppContext, "db" | "clock" | "realtime">;
export type ConversationRow = Omit<Selectable<AgentConversationsTable>, "id"> & { id: number };
export type MemberRow = Selectable<ConversationMembersTable>;

/** `<lower id>:<higher id>`: the same for both people, so their conversation is found either way round. */
export const pairKey = (a: number, b: number) => `${Math.min(a, b)}:${Math.max(a, b)}`;

/**
 * A person named by a handle: a numeric user id, or a username (any case, a leading `@` dropped).
 * Unknown: undefined.
 */
export async function findPerson(db: Kysely<Schema>, handle: string): Promise<PersonRow | undefined> {
  const text = handle.trim().replace(/^@/, "").toLowerCase();
  const query = db.selectFrom("users").select(["id", "username", "name"]);
  const row = /^[1-9][0-9]{0,15}$/.test(text)
    ? await query.where("id", "=", Number(text)).executeTakeFirst()
    : await query.where("username", "=", text).executeTakeFirst();
  return row ? { id: Number(row.id), username: row.username, name: row.name } : undefined;
}

export const displayName = (person: PersonRow) => person.name || person.username;

/**
 * The one `shared_agent` conversation of two people, created on first use. The unique pair key
 * makes two concurrent first messages meet in the same row: the loser's insert does nothing and
 * it reads the winner's (PostgreSQL's `on conflict` waits for the winner to commit).
 */
export async function openPairConversation(deps: Deps, a: PersonRow, b: PersonRow): Promise<number> {
  const key = pairKey(a.id, b.id);
  // Almost always it exists: a read, and no write (each write is a commit to wait for).
  const existing = await deps.db.selectFrom("agent_conversations").select("id").where("pair_key", "=", key).executeTakeFirst();
  if (existing) return Number(existing.id);
  const now = deps.clock.iso();
  const [low, high] = a.id < b.id ? [a, b] : [b, a];
  const inserted = await deps.db
    .insertInto("agent_conversations")
    .values({
      owner_id: low.id,
      kind: "shared_agent",
      title: `${low.username} & ${high.username}`,
      pair_key: key,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column("pair_key").doNothing())
    .returning("id")
    .executeTakeFirst();
  const id = inserted
    ? Number(inserted.id)
    : Number((await deps.db.selectFrom("agent_conversations").select("id").where("pair_key", "=", key).executeTakeFirstOrThrow()).id);
  await deps.db
    .insertInto("conversation_members")
    .values([low, high].map((person) => ({ conversation_id: id, user_id: person.id, role: "member" as const, joined_at: now })))
    .onConflict((oc) => oc.columns(["conversation_id", "user_id"]).doNothing())
    .execute();
  return id;
}

/** The caller's active membership of a conversation, if any. */
export async function activeMembership(db: Kysely<Schema>, conversationId: number, userId: number): Promise<MemberRow | undefined> {
  return db
    .selectFrom("conversation_members")
    .selectAll()
    .where("conversation_id", "=", conversationId)
    .where("user_id", "=", userId)
    .where("left_at", "is", null)
    .executeTakeFirst();
}

/**
 * A conversation the caller may read and write: their own personal-agent (`agent`) one, or a
 * shared or group one they are an active member of. Anything else, however it exists, is the same
 * 404, so an id tells nobody whether someone else's conversation is there.
 */
export async function visibleConversation(
  db: Kysely<Schema>,
  userId: number,
  id: number,
): Promise<{ row: ConversationRow; membership: MemberRow | undefined }> {
  const found = await db.selectFrom("agent_conversations").selectAll().where("id", "=", id).executeTakeFirst();
  if (found) {
    const row = { ...found, id: Number(found.id) };
    if (row.kind === "agent" && Number(row.owner_id) === userId) return { row, membership: undefined };
    if (row.kind !== "agent") {
      const membership = await activeMembership(db, row.id, userId);
      // A pair's conversation holding only a stranger's request is not the recipient's yet (message-requests.ts).
      if (membership && (row.kind !== "shared_agent" || (await hasMessageShownTo(db, row.id, userId)))) return { row, membership };
    }
  }
  throw notFound("Conversation");
}

/** Whether a conversation holds a message `userId` may see (see {@link shownTo}). */
async function hasMessageShownTo(db: Kysely<Schema>, conversationId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom("agent_messages")
    .select("id")
    .where("conversation_id", "=", conversationId)
    .where(shownTo(userId))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The active members of a conversation, by user id. */
export async function activeMemberIds(db: Kysely<Schema>, conversationId: number): Promise<number[]> {
  const rows = await db
    .selectFrom("conversation_members")
    .select("user_id")
    .where("conversation_id", "=", conversationId)
    .where("left_at", "is", null)
    .orderBy("user_id")
    .execute();
  return rows.map((row) => Number(row.user_id));
}

export interface Post {
  readonly conversationId: number;
  /** The person who wrote it, or on whose behalf their agent did. */
  readonly author: PersonRow;
  readonly senderType: "human" | "agent";
  readonly role: "user" | "assistant";
  readonly content: string;
  readonly intent: string | null;
  readonly clientMessageId?: string;
  readonly toolsUsed?: readonly string[];
  readonly model?: string | null;
  /** Held by this message request (message-requests.ts): stored, but no `message` event; the recipient sees it once accepted. */
  readonly requestId?: number;
}

export interface Posted {
  readonly message: ReturnType<typeof messageJson>;
  /** The author used the clientMessageId before in this conversation: nothing new was stored or sent. */
  readonly duplicate: boolean;
}

export const MESSAGE_EVENT = "message";

/**
 * Appends messages to a conversation in one transaction and tells every other active member (a
 * `message` event on their realtime channel, committed with the message). A clientMessageId makes
 * a post at-most-once per author: their repeat stores nothing, sends nothing and answers their
 * first message; another member's same id is their own, a post of its own.
 */
export async function postMessages(deps: Deps, posts: readonly Post[], extra: Record<string, unknown> = {}): Promise<Posted[]> {
  const events = deps.realtime.batch();
  const results = await deps.db.transaction().execute(async (tx) => {
    const out: Posted[] = [];
    for (const post of posts) {
      const now = deps.clock.iso();
      const inserted = await tx
        .insertInto("agent_messages")
        .values({
          conversation_id: post.conversationId,
          role: post.role,
          sender_type: post.senderType,
          sender_id: String(post.author.id),
          sender_label: post.senderType === "agent" ? `${displayName(post.author)}'s agent` : displayName(post.author),
          content: post.content,
          status: "complete",
          tools_used: JSON.stringify(post.toolsUsed ?? []),
          model: post.model ?? null,
          created_at: now,
          read_at: now,
          client_message_id: post.clientMessageId ?? null,
          intent: post.intent,
          request_id: post.requestId ?? null,
        })
        .$if(post.clientMessageId !== undefined, (qb) =>
          qb.onConflict((oc) => oc.columns(["conversation_id", "sender_id", "client_message_id"]).doNothing()),
        )
        .returningAll()
        .executeTakeFirst();
      if (!inserted) {
        const first = await tx
          .selectFrom("agent_messages")
          .selectAll()
          .where("conversation_id", "=", post.conversationId)
          .where("sender_id", "=", String(post.author.id))
          .where("client_message_id", "=", post.clientMessageId as string)
          .executeTakeFirstOrThrow();
        out.push({ message: messageJson(first as MessageRow), duplicate: true });
        continue;
      }
      const message = messageJson(inserted as MessageRow);
      await tx.updateTable("agent_conversations").set({ updated_at: now }).where("id", "=", post.conversationId).execute();
      // The author has read what they wrote.
      await tx
        .updateTable("conversation_members")
        .set({ last_read_id: message.id })
        .where("conversation_id", "=", post.conversationId)
        .where("user_id", "=", post.author.id)
        .execute();
      // A held message is announced to nobody: its request tells the recipient, without its text.
      const recipients =
        post.requestId === undefined ? (await activeMemberIds(tx, post.conversationId)).filter((id) => id !== post.author.id) : [];
      for (const userId of recipients) {
        await events.appendToUserStream(tx, userId, MESSAGE_EVENT, { ...extra, conversationId: post.conversationId, message });
        await enqueueWebhookEvent(tx, events, deps.clock, userId, "message.received", {
          conversationId: post.conversationId,
          messageId: message.id,
          fromUserId: post.author.id,
          senderType: post.senderType,
          summary: summarize(post.content),
        });
      }
      out.push({ message, duplicate: false });
    }
    return out;
  });
  events.publish();
  return results;
}

export const groupNotFound = (id: number) =>
  new ApiError(404, "group_not_found", `Group ${id} not found among the groups you are an active member of`);
