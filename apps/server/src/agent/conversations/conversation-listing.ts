import { type Kysely, sql } from "kysely";
import type { ConversationKind, Schema } from "../../db/schema";
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
    status: row.status,
    toolsUsed: JSON.parse(row.tools_used) as string[],
    createdAt: row.created_at,
  };
}

interface ListOptions {
  readonly view: ConversationView;
  readonly limit: number;
  /** Messages per conversation: the newest ones, listed oldest first. */
  readonly messagesPerConversation: number;
  /** Just this conversation (a read of one). */
  readonly onlyId?: number;
}

export async function listConversations(db: Kysely<Schema>, ownerId: number, options: ListOptions) {
  const rows = await db
    .selectFrom("agent_conversations")
    .selectAll()
    .where("owner_id", "=", ownerId)
    .where("kind", "in", [...KINDS_OF_VIEW[options.view]])
    .$if(options.onlyId !== undefined, (qb) => qb.where("id", "=", options.onlyId as number))
    .orderBy("updated_at", "desc")
    .orderBy("id", "desc")
    .limit(options.limit)
    .execute();
  return Promise.all(
    rows.map(async (row) => {
      const id = Number(row.id);
      const [count, messages] = await Promise.all([
        db
          .selectFrom("agent_messages")
          .select((eb) => [eb.fn.countAll<number>().as("n"), eb.fn.count<number>("id").filterWhere("read_at", "is", null).as("unread")])
          .where("conversation_id", "=", id)
          .executeTakeFirst(),
        db
          .selectFrom("agent_messages")
          .selectAll()
          .where("conversation_id", "=", id)
          .orderBy("id", "desc")
          .limit(options.messagesPerConversation)
          .execute(),
      ]);
      return {
        conversationId: id,
        type: TYPE_OF_KIND[row.kind],
        title: row.title,
        contact: null,
        group: null,
        messageCount: Number(count?.n ?? 0),
        unreadCount: Number(count?.unread ?? 0),
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        messages: messages.reverse().map(messageJson),
      };
    }),
  );
}

/** How many conversations the owner has in the view, and how many unread messages they hold. */
export async function countConversations(db: Kysely<Schema>, ownerId: number, view: ConversationView) {
  const kinds = [...KINDS_OF_VIEW[view]];
  const [conversations, unread] = await Promise.all([
    db
      .selectFrom("agent_conversations")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("owner_id", "=", ownerId)
      .where("kind", "in", kinds)
      .executeTakeFirst(),
    db
      .selectFrom("agent_messages")
      .innerJoin("agent_conversations", "agent_conversations.id", "agent_messages.conversation_id")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("agent_conversations.owner_id", "=", ownerId)
      .where("agent_conversations.kind", "in", kinds)
      .where("agent_messages.read_at", "is", null)
      .executeTakeFirst(),
  ]);
  return { total: Number(conversations?.n ?? 0), unreadTotal: Number(unread?.n ?? 0) };
}

/** `%`, `_` and the escape character itself match only themselves in a LIKE pattern (SQLite has no default escape). */
function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Messages of the owner's conversations in the view whose text contains `q` (any case), newest first. */
export async function searchConversationMessages(db: Kysely<Schema>, ownerId: number, view: ConversationView, q: string, limit: number) {
  const rows = await db
    .selectFrom("agent_messages")
    .innerJoin("agent_conversations", "agent_conversations.id", "agent_messages.conversation_id")
    .selectAll("agent_messages")
    .where("agent_conversations.owner_id", "=", ownerId)
    .where("agent_conversations.kind", "in", [...KINDS_OF_VIEW[view]])
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
