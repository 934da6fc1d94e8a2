import { z } from "zod";
import type { InboxConversation, InboxConversationDetail, InboxMessage, InboxPerson } from "../../shared/desktop-api";

/** A preview is one line of a message's start: enough to know what it is about. */
const PREVIEW_LENGTH = 160;

// `GET /conversations` and `GET /conversations/{id}`, read leniently: fields the inbox does not use may
// come and go, and a conversation of a kind it does not know (the personal agent's) is left out.
const Person = z.object({
  userId: z.union([z.string(), z.number()]).transform(String),
  username: z.string(),
  name: z.string().nullable().optional(),
});
const Message = z.object({
  id: z.number().int(),
  conversationId: z.number().int(),
  senderType: z.enum(["human", "agent"]).catch("agent"),
  senderId: z.union([z.string(), z.number()]).transform(String).nullable().optional(),
  senderLabel: z.string().optional().default(""),
  content: z.string(),
  createdAt: z.string(),
});
export const ConversationShape = z.object({
  conversationId: z.number().int(),
  type: z.string(),
  title: z.string().optional().default(""),
  contact: Person.nullable().optional(),
  group: z
    .object({ name: z.string(), members: z.array(Person).optional().default([]) })
    .nullable()
    .optional(),
  unreadCount: z.number().int().nonnegative().optional().default(0),
  updatedAt: z.string(),
  messages: z.array(Message).optional().default([]),
});
type ConversationAnswer = z.output<typeof ConversationShape>;

/** One line of a message's start, for a list or a notification. */
export function previewOf(content: string): string {
  const line = content.replace(/\s+/g, " ").trim();
  return line.length > PREVIEW_LENGTH ? `${line.slice(0, PREVIEW_LENGTH)}…` : line;
}

function person(answer: z.output<typeof Person>): InboxPerson {
  const name = answer.name?.trim();
  return { userId: answer.userId, username: answer.username, name: name ? name : answer.username };
}

export function inboxMessage(answer: z.output<typeof Message>, ownUserId: number): InboxMessage {
  const senderId = answer.senderId ?? null;
  return {
    id: answer.id,
    conversationId: answer.conversationId,
    senderType: answer.senderType,
    senderId,
    senderLabel: answer.senderLabel || (senderId === null ? "Someone" : `User ${senderId}`),
    content: answer.content,
    mine: senderId === String(ownUserId),
    createdAt: answer.createdAt,
  };
}

/** A conversation as the inbox lists it; null for a kind the inbox does not show (the personal agent's). */
export function inboxConversation(answer: ConversationAnswer): InboxConversation | null {
  const newest = answer.messages.at(-1);
  const common = {
    conversationId: answer.conversationId,
    unreadCount: answer.unreadCount,
    preview: newest ? previewOf(newest.content) : null,
    updatedAt: answer.updatedAt,
  };
  if (answer.type === "shared_agent") {
    const contact = answer.contact ? person(answer.contact) : null;
    return { ...common, kind: "person", title: contact?.name ?? (answer.title || "Someone"), contact, members: contact ? [contact] : [] };
  }
  if (answer.type === "group") {
    return {
      ...common,
      kind: "group",
      title: answer.group?.name ?? (answer.title || "A group"),
      contact: null,
      members: (answer.group?.members ?? []).map(person),
    };
  }
  return null;
}

export function inboxConversationDetail(answer: ConversationAnswer, ownUserId: number): InboxConversationDetail | null {
  const conversation = inboxConversation(answer);
  return conversation && { ...conversation, messages: answer.messages.map((message) => inboxMessage(message, ownUserId)) };
}

/** A view's unread messages from `GET /conversations`: its `unreadTotal` (every conversation of the view), else the page's sum. */
export function unreadOf(answer: { unreadTotal?: number; conversations?: readonly { unreadCount: number }[] }): number {
  return answer.unreadTotal ?? (answer.conversations ?? []).reduce((sum, row) => sum + row.unreadCount, 0);
}
