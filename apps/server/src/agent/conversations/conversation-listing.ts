import { type Expression, type ExpressionBuilder, expressionBuilder, type Kysely, type SqlBool, sql } from "kysely";
import type { ConversationKind, Schema } from "../../db/schema";
import { groupSummary } from "../../people/messaging/group-summary";
import { loadPeople } from "../../people/network/network-people";
import type { MessageRow } from "./conversation-store";

/** The views clients ask for; `me` is the personal agent, `coo` and `group` come with messaging. */
export type ConversationView = "me" | "coo" | "group" | "all";

const KINDS_OF_VIEW: Record<ConversationView, readonly ConversationKind[]> = {
  me: ["agent"],
  coo: ["shared_agent"],
  group: ["group"],
  all: ["agent", "shared_agent", "group"],
};

/** The interface's conversation `type` for each kind: the personal agent's thread is a direct one. */
const TYPE_OF_KIND: Record<ConversationKind, "direct" | "shared_agent" | "group"> = {
  agent: "direct",
  shared_agent: "shared_agent",
  group: "group",
};

export function messageJson(row: MessageRow) {
  return {
    id: Number(row.id),
    conversationId: Number(row.conversation_id),
    role: row.role,
    senderType: row.sender_type,
    senderId: row.sender_id,
    senderLabel: row.sender_label,
    content: row.content,
    intent: row.intent ?? null,
    status: row.status,
    toolsUsed: JSON.parse(row.tools_used) as string[],
    createdAt: row.created_at,
  };
}

/**
 * The messages a user may see of the conversations they are in: all but those held by a message
 * request (messaging/message-requests.ts) that is not accepted, which only their sender sees.
 */
export function shownTo(userId: number): Expression<SqlBool> {
  const eb = expressionBuilder<Schema, "agent_messages">();
  return eb.or([
    eb("agent_messages.request_id", "is", null),
    // Correlated on the request's primary key: one lookup per held message, however many requests there are.
    eb.exists(
      eb
        .selectFrom("message_requests")
        .select("message_requests.id")
        .whereRef("message_requests.id", "=", "agent_messages.request_id")
        .where((inner) => inner.or([inner("message_requests.status", "=", "accepted"), inner("message_requests.sender_id", "=", userId)])),
    ),
  ]);
}

/**
 * The conversations a user may see: their own personal-agent ones, and the shared and group ones
 * they are an active member of (a pair's one only once it holds a message they may see: one that
 * holds only a stranger's request is not theirs yet). Every listing and search goes through this
 * one condition.
 */
function visibleTo(eb: ExpressionBuilder<Schema, "agent_conversations">, userId: number) {
  return eb.or([
    eb.and([eb("agent_conversations.kind", "=", "agent"), eb("agent_conversations.owner_id", "=", userId)]),
    eb.and([
      eb(
        "agent_conversations.id",
        "in",
        eb
          .selectFrom("conversation_members")
          .select("conversation_members.conversation_id")
          .where("conversation_members.user_id", "=", userId)
          .where("conversation_members.left_at", "is", null),
      ),
      eb.or([
        eb("agent_conversations.kind", "!=", "shared_agent"),
        eb.exists(
          eb
            .selectFrom("agent_messages")
            .select("agent_messages.id")
            .whereRef("agent_messages.conversation_id", "=", "agent_conversations.id")
            .where(shownTo(userId)),
        ),
      ]),
    ]),
  ]);
}

/** Only conversations this person (by id) is an active member of; -1: nobody (an unknown contact). */
function withMember(eb: ExpressionBuilder<Schema, "agent_conversations">, memberId: number) {
  return eb(
    "agent_conversations.id",
    "in",
    eb
      .selectFrom("conversation_members")
      .select("conversation_members.conversation_id")
      .where("conversation_members.user_id", "=", memberId)
      .where("conversation_members.left_at", "is", null),
  );
}

/** Messages of a shared or group conversation the member has not read: others' messages after their last read. */
async function unreadOfMember(db: Kysely<Schema>, conversationId: number, userId: number): Promise<number> {
  const row = await db
    .selectFrom("agent_messages")
    .innerJoin("conversation_members", (join) =>
      join
        .onRef("conversation_members.conversation_id", "=", "agent_messages.conversation_id")
        .on("conversation_members.user_id", "=", userId),
    )
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("agent_messages.conversation_id", "=", conversationId)
    .whereRef("agent_messages.id", ">", "conversation_members.last_read_id")
    .where((eb) => eb.or([eb("agent_messages.sender_id", "is", null), eb("agent_messages.sender_id", "!=", String(userId))]))
    .where(shownTo(userId))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

interface ListOptions {
  readonly view: ConversationView;
  readonly limit: number;
  /** Messages per conversation: the newest ones, listed oldest first. */
  readonly messagesPerConversation: number;
  /** Just this conversation (a read of one). */
  readonly onlyId?: number;
  /** Only conversations this person is an active member of (`contact`); -1 matches none. */
  readonly memberId?: number;
}

export async function listConversations(db: Kysely<Schema>, ownerId: number, options: ListOptions) {
  const rows = await db
    .selectFrom("agent_conversations")
    .selectAll()
    .where((eb) => visibleTo(eb, ownerId))
    .where("kind", "in", [...KINDS_OF_VIEW[options.view]])
    .$if(options.onlyId !== undefined, (qb) => qb.where("id", "=", options.onlyId as number))
    .$if(options.memberId !== undefined, (qb) => qb.where((eb) => withMember(eb, options.memberId as number)))
    .orderBy("updated_at", "desc")
    .orderBy("id", "desc")
    .limit(options.limit)
    .execute();
  return Promise.all(
    rows.map(async (row) => {
      const id = Number(row.id);
      const [count, messages, unread, contact, group] = await Promise.all([
        db
          .selectFrom("agent_messages")
          .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.count<number>("id").filterWhere("read_at", "is", null).as("unread")])
          .where("conversation_id", "=", id)
          .where(shownTo(ownerId))
          .executeTakeFirst(),
        db
          .selectFrom("agent_messages")
          .selectAll()
          .where("conversation_id", "=", id)
          .where(shownTo(ownerId))
          .orderBy("id", "desc")
          .limit(options.messagesPerConversation)
          .execute(),
        row.kind === "agent" ? undefined : unreadOfMember(db, id, ownerId),
        row.kind === "shared_agent" ? otherOfPair(db, row.pair_key, ownerId) : null,
        row.kind === "group" ? groupSummary(db, id, ownerId) : null,
      ]);
      return {
        conversationId: id,
        type: TYPE_OF_KIND[row.kind],
        title: row.kind === "shared_agent" && contact ? contact.name : row.title,
        contact,
        group,
        messageCount: Number(count?.n ?? 0),
        unreadCount: unread ?? Number(count?.unread ?? 0),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        messages: messages.reverse().map(messageJson),
      };
    }),
  );
}

/** The other person of a pair conversation, as network bodies show people. */
async function otherOfPair(db: Kysely<Schema>, pairKey: string | null, userId: number) {
  const [a, b] = (pairKey ?? "").split(":").map(Number);
  const other = a === userId ? b : a;
  if (other === undefined || !Number.isFinite(other)) return null;
  return (await loadPeople(db, [other])).get(other) ?? null;
}

/** How many conversations the owner has in the view, and how many unread messages they hold. */
export async function countConversations(db: Kysely<Schema>, ownerId: number, view: ConversationView) {
  const kinds = [...KINDS_OF_VIEW[view]];
  const shared = kinds.filter((kind) => kind !== "agent");
  const [conversations, unread, sharedUnread] = await Promise.all([
    db
      .selectFrom("agent_conversations")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where((eb) => visibleTo(eb, ownerId))
      .where("kind", "in", kinds)
      .executeTakeFirst(),
    kinds.includes("agent")
      ? db
          .selectFrom("agent_messages")
          .innerJoin("agent_conversations", "agent_conversations.id", "agent_messages.conversation_id")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("agent_conversations.owner_id", "=", ownerId)
          .where("agent_conversations.kind", "=", "agent")
          .where("agent_messages.read_at", "is", null)
          .executeTakeFirst()
      : undefined,
    shared.length > 0
      ? db
          .selectFrom("agent_messages")
          .innerJoin("conversation_members", "conversation_members.conversation_id", "agent_messages.conversation_id")
          .innerJoin("agent_conversations", "agent_conversations.id", "agent_messages.conversation_id")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("conversation_members.user_id", "=", ownerId)
          .where("conversation_members.left_at", "is", null)
          .where("agent_conversations.kind", "in", shared)
          .whereRef("agent_messages.id", ">", "conversation_members.last_read_id")
          .where((eb) => eb.or([eb("agent_messages.sender_id", "is", null), eb("agent_messages.sender_id", "!=", String(ownerId))]))
          .where(shownTo(ownerId))
          .executeTakeFirst()
      : undefined,
  ]);
  return { total: Number(conversations?.n ?? 0), unreadTotal: Number(unread?.n ?? 0) + Number(sharedUnread?.n ?? 0) };
}

/** `%`, `_` and the escape character itself match only themselves in a LIKE pattern (SQLite has no default escape). */
function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Messages of the owner's conversations in the view whose text contains `q` (any case), newest first. */
export async function searchConversationMessages(
  db: Kysely<Schema>,
  ownerId: number,
  view: ConversationView,
  q: string,
  limit: number,
  memberId?: number,
) {
  const rows = await db
    .selectFrom("agent_messages")
    .innerJoin("agent_conversations", "agent_conversations.id", "agent_messages.conversation_id")
    .selectAll("agent_messages")
    .where((eb) => visibleTo(eb, ownerId))
    .where("agent_conversations.kind", "in", [...KINDS_OF_VIEW[view]])
    .$if(memberId !== undefined, (qb) => qb.where((eb) => withMember(eb, memberId as number)))
    .where(shownTo(ownerId))
    .where(sql<boolean>`lower(agent_messages.content) like ${likePattern(q)} escape '\\'`)
    .orderBy("agent_messages.id", "desc")
    .limit(limit)
    .execute();
  const messages = rows.map(messageJson);
  const conversations = new Set(messages.map((m) => m.conversationId)).size;
  return {
    messages,
    summary: { query: q, matches: messages.length, conversations, limited: messages.length === limit },
  };
}
