import type { Kysely, Selectable } from "kysely";
import type { AgentMessagesTable, ConversationKind, Schema } from "../../db/schema";
import { notFound } from "../../http/errors";

export type MessageRow = Selectable<AgentMessagesTable>;

/** A message as it is appended; the store adds the id and the time. */
export interface NewMessage {
  readonly role: MessageRow["role"];
  readonly senderType: MessageRow["sender_type"];
  readonly senderId: string | null;
  readonly senderLabel: string;
  readonly content: string;
  readonly status: MessageRow["status"];
  readonly toolsUsed?: readonly string[];
  readonly model?: string | null;
  /** Arrives unread (a heartbeat message); otherwise it was seen as it was written. */
  readonly unread?: boolean;
}

/** Titles are the first words of the first message, as chat apps name threads. */
const TITLE_CHARS = 80;

export function titleFrom(message: string): string {
  const line = message.replace(/\s+/g, " ").trim();
  return line.length <= TITLE_CHARS ? line : `${line.slice(0, TITLE_CHARS - 1).trimEnd()}…`;
}

export async function createConversation(
  db: Kysely<Schema>,
  ownerId: number,
  kind: ConversationKind,
  title: string,
  now: string,
): Promise<number> {
  const row = await db
    .insertInto("agent_conversations")
    .values({ owner_id: ownerId, kind, title, created_at: now, updated_at: now })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The owner's conversation of that kind; anyone else's, or none, is the same 404. */
export async function getOwnConversation(db: Kysely<Schema>, ownerId: number, kind: ConversationKind, id: number) {
  const row = await db
    .selectFrom("agent_conversations")
    .selectAll()
    .where("id", "=", id)
    .where("owner_id", "=", ownerId)
    .where("kind", "=", kind)
    .executeTakeFirst();
  if (!row) throw notFound("Conversation");
  return { ...row, id: Number(row.id) };
}

/** Appends messages in order, in one transaction, and marks the conversation as just used. */
export async function appendMessages(
  db: Kysely<Schema>,
  conversationId: number,
  messages: readonly NewMessage[],
  now: string,
): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const ids: number[] = [];
    for (const message of messages) {
      const row = await trx
        .insertInto("agent_messages")
        .values({
          conversation_id: conversationId,
          role: message.role,
          sender_type: message.senderType,
          sender_id: message.senderId,
          sender_label: message.senderLabel,
          content: message.content,
          status: message.status,
          tools_used: JSON.stringify(message.toolsUsed ?? []),
          model: message.model ?? null,
          created_at: now,
          read_at: message.unread ? null : now,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      ids.push(Number(row.id));
    }
    await trx.updateTable("agent_conversations").set({ updated_at: now }).where("id", "=", conversationId).execute();
    return ids;
  });
}

/** The last `limit` messages of a conversation, oldest first. */
export async function recentMessages(db: Kysely<Schema>, conversationId: number, limit: number): Promise<MessageRow[]> {
  const rows = await db
    .selectFrom("agent_messages")
    .selectAll()
    .where("conversation_id", "=", conversationId)
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.reverse();
}

/** Removes a conversation that never got a message (a first turn that failed). */
export async function deleteIfEmpty(db: Kysely<Schema>, conversationId: number): Promise<void> {
  const any = await db.selectFrom("agent_messages").select("id").where("conversation_id", "=", conversationId).limit(1).executeTakeFirst();
  if (!any) await db.deleteFrom("agent_conversations").where("id", "=", conversationId).execute();
}

/** Marks every unread message of a conversation read; answers how many were unread. */
export async function markConversationRead(db: Kysely<Schema>, conversationId: number, now: string): Promise<number> {
  const result = await db
    .updateTable("agent_messages")
    .set({ read_at: now })
    .where("conversation_id", "=", conversationId)
    .where("read_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
