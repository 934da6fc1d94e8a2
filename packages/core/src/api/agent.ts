import { z } from "zod";
import { isTimeZone } from "../dates";
import { Id, IdParam, success, Timestamp } from "./common";
import { GroupSummary } from "./messaging";
import { NetworkPerson } from "./network";
import { defineRoute } from "./route";

/** The longest chat message accepted, in characters (about 8,000 words). */
export const MAX_CHAT_MESSAGE_CHARS = 32_000;
/** Notes that may be attached to one message. */
export const MAX_CHAT_ATTACHMENTS = 10;

const TimeZone = z.string().max(64).refine(isTimeZone, { error: "must be an IANA time zone such as Europe/Paris" });

export const ChatRequest = z.object({
  message: z
    .string({ error: "message is required" })
    .max(MAX_CHAT_MESSAGE_CHARS, { error: `must be at most ${MAX_CHAT_MESSAGE_CHARS} characters` })
    .refine((text) => text.trim().length > 0, { error: "must not be empty" }),
  stream: z.boolean().default(true),
  conversationId: z
    .union([
      Id,
      z
        .string()
        .regex(/^\d{1,15}$/, { error: "must be a conversation id" })
        .transform(Number),
    ])
    .optional()
    .describe("continue this conversation (number, or a string of digits)"),
  userTimezone: TimeZone.default("UTC"),
  model: z.string().max(200).optional().describe("a model alias: default, fast, smart or local; absent means default"),
  temperature: z.number().min(0).max(2).optional(),
  attachmentIds: z
    .array(Id)
    .max(MAX_CHAT_ATTACHMENTS, { error: `at most ${MAX_CHAT_ATTACHMENTS} attachments` })
    .optional()
    .describe("ids of notes whose content joins the message"),
});

export const TokenUsage = z.object({ promptTokens: z.number().int(), completionTokens: z.number().int(), totalTokens: z.number().int() });

/** The lines of a run as it goes, in the chat stream and every stream of its format (a managed agent's run). */
export const RunProgressLines = [
  z.object({ type: z.literal("text-delta"), textDelta: z.string() }),
  z.object({ type: z.literal("tool-call-start"), toolName: z.string(), toolCallId: z.string() }),
  z.object({ type: z.literal("tool-call-end"), toolName: z.string(), toolCallId: z.string(), ok: z.boolean() }),
  z.object({ type: z.literal("pipeline-progress"), stage: z.string(), elapsedMs: z.number().int() }),
  z.object({ type: z.literal("error"), error: z.string() }),
] as const;

/** One line of the chat stream. Clients skip types they do not know. */
export const ChatStreamLine = z.discriminatedUnion("type", [
  z.object({ type: z.literal("conversation-start"), conversationId: z.number().int() }),
  ...RunProgressLines,
  z.object({
    type: z.literal("completion"),
    conversationId: z.number().int(),
    messageId: z.number().int().nullable(),
    status: z
      .enum(["completed", "incomplete", "failed", "budget_exceeded"])
      .describe("budget_exceeded: a budget was crossed and the run stopped at the next step (the answer so far is kept, incomplete)"),
    toolsUsed: z.array(z.string()),
    metadata: TokenUsage.extend({ model: z.string(), modelId: z.string() }),
  }),
]);

export const ChatMessage = z.object({
  id: z.number().int(),
  conversationId: z.number().int(),
  role: z.enum(["user", "assistant"]),
  senderType: z.enum(["human", "agent"]),
  senderId: z.string().nullable(),
  senderLabel: z.string(),
  content: z.string(),
  intent: z.string().nullable().describe("what an agent message said it was for (inform, query…); null for chat turns"),
  status: z.enum(["complete", "incomplete"]).describe("incomplete: the answer was cut short (the client left, or time ran out)"),
  toolsUsed: z.array(z.string()),
  createdAt: Timestamp,
});

const Conversation = z.object({
  conversationId: z.number().int(),
  type: z.enum(["direct", "shared_agent", "group"]).describe("the personal agent's threads are direct"),
  title: z.string(),
  contact: NetworkPerson.nullable().describe("shared_agent: the other person; null otherwise"),
  group: GroupSummary.nullable().describe("group: its name, your role and its active members; null otherwise"),
  messageCount: z.number().int(),
  unreadCount: z
    .number()
    .int()
    .describe(
      "direct: the agent's messages not yet marked read (heartbeat messages arrive unread); shared and group: others' messages after your last read",
    ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  messages: z.array(ChatMessage).describe("the newest messages, oldest first"),
});

const ConversationParams = z.object({ id: IdParam });

export const agentRoutes = {
  chat: defineRoute({
    method: "POST",
    path: "/chat",
    category: "agent",
    summary:
      "Chat with the personal agent. Streams newline-delimited JSON (text/plain) unless `stream` is false, which answers one JSON object",
    auth: "user",
    body: ChatRequest,
    bodyLimit: 256 * 1024,
    responseMediaType: "text/plain",
    response: ChatStreamLine,
    jsonResponse: success({
      conversationId: z.number().int(),
      messageId: z.number().int().nullable(),
      response: z.string(),
      toolsUsed: z.array(z.string()),
      metadata: TokenUsage.extend({ model: z.string(), modelId: z.string() }),
    }),
  }),
  listConversations: defineRoute({
    method: "GET",
    path: "/conversations",
    category: "agent",
    summary:
      "The caller's conversations (me: the personal agent, coo: shared with a person, group: groups), newest first; with q, the messages containing it",
    auth: "user",
    query: z.object({
      view: z.enum(["me", "coo", "group", "all"]).default("all"),
      limit: z.coerce.number().int().min(1).max(100).default(20),
      messages: z.coerce.number().int().min(0).max(200).default(50).describe("newest messages per conversation"),
      q: z.string().trim().min(1).max(200).optional(),
      contact: z
        .string()
        .trim()
        .max(200)
        .optional()
        .describe("a username or user id: only conversations that person is an active member of"),
    }),
    response: success({
      conversations: z.array(Conversation).optional(),
      total: z.number().int().optional().describe("conversations in the view"),
      unreadTotal: z.number().int().optional().describe("unread messages in all the view's conversations"),
      messages: z.array(ChatMessage).optional(),
      summary: z.object({ query: z.string(), matches: z.number().int(), conversations: z.number().int(), limited: z.boolean() }).optional(),
    }),
  }),
  getConversation: defineRoute({
    method: "GET",
    path: "/conversations/:id",
    category: "agent",
    summary: "One of the caller's conversations with its messages (up to the newest 1,000), oldest first",
    auth: "user",
    params: ConversationParams,
    response: success({ conversation: Conversation }),
  }),
  markConversationRead: defineRoute({
    method: "POST",
    path: "/conversations/:id/read",
    category: "agent",
    summary: "Mark one of the caller's conversations read (personal agent: every message; shared and group: up to the newest)",
    auth: "user",
    params: ConversationParams,
    response: success({ conversationId: z.number().int(), markedRead: z.number().int().describe("messages that were unread") }),
  }),
  deleteConversation: defineRoute({
    method: "DELETE",
    path: "/conversations/:id",
    category: "agent",
    summary: "Delete one of the caller's personal-agent conversations and its messages",
    auth: "user",
    params: ConversationParams,
    response: success({}),
  }),
} as const;
