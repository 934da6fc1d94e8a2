import { randomUUID } from "node:crypto";
import { MAX_AGENT_MESSAGE_CHARS, MAX_GROUP_MEMBERS, MAX_GROUP_NAME_CHARS, TandemApiError } from "@tandem/core";
import { z } from "zod";
import { INBOX_MESSAGE_MAX, type InboxConversation, type InboxPerson } from "../../shared/desktop-api";
import { connectionsCall, isObjectMissing, isRouteMissing, lacksScope, readAnswer } from "../connections/connections-call";
import type { InboxFacet } from "../facets";
import type { SessionService } from "../host-context";
import { parseInput } from "../parse-input";
import { ConversationShape, inboxConversation, inboxConversationDetail, inboxMessage, unreadOf } from "./inbox-read";

export const INBOX_OFFLINE =
  "Can't reach the server right now. Messages are kept on the server; try again once you are back online. What you typed is kept.";
export const INBOX_UNSUPPORTED = "This server doesn't support messaging people yet.";
export const CONTACTS_NOT_ALLOWED =
  "This desktop's key cannot list your contacts (it lacks the os.network:read permission). Type a username instead.";
const GONE = "This conversation is no longer there; you may have left it, or it was removed.";

// The two sides must agree on the longest message, or the page would let through what the server refuses.
if (INBOX_MESSAGE_MAX !== MAX_AGENT_MESSAGE_CHARS) throw new Error("INBOX_MESSAGE_MAX differs from the server's limit");

const ConversationList = z.object({ conversations: z.array(ConversationShape).optional().default([]) });
const OneConversation = z.object({ conversation: ConversationShape });

const Text = z
  .string()
  .max(INBOX_MESSAGE_MAX, { error: `A message is at most ${INBOX_MESSAGE_MAX} characters` })
  .refine((text) => text.trim() !== "", { error: "Write something first" });
const ConversationId = z.number().int().positive();
const ViewInput = z.object({ view: z.enum(["coo", "group", "all"]) });
const IdInput = z.object({ conversationId: ConversationId });
const ReplyInput = z.object({ conversationId: ConversationId, content: Text, clientMessageId: z.string().min(1).max(128) });
/**
 * A person (username, `@username` or user id) or `group:<id>`. An agent (`<username>_coo`) is not
 * messaged from here: that asks their agent to answer, which the inbox never means to do.
 */
const Recipient = z
  .string()
  .trim()
  .min(1, { error: "Choose who the message is for" })
  .max(200)
  .refine((to) => /^group:\d+$/.test(to) || /^@?[\p{L}\p{N}_.-]+$/u.test(to), { error: "Give a username, a user id or a group" })
  .refine((to) => !/_coo$/i.test(to), { error: "Give the person's username, not their agent's" });
const SendInput = z.object({ to: Recipient, message: Text });
const AnswerInput = z.object({ requestId: z.number().int().positive(), action: z.enum(["accept", "ignore", "block"]) });
const DONE_WORDS = { accept: "Accepted", ignore: "Ignored", block: "Blocked" } as const;
const GroupInput = z.object({
  name: z.string().trim().min(1, { error: "Give the group a name" }).max(MAX_GROUP_NAME_CHARS, { error: "The name is too long" }),
  members: z
    .array(z.string().trim().min(1).max(128))
    .min(1, { error: "Choose at least one person" })
    .max(MAX_GROUP_MEMBERS - 1, { error: `A group has at most ${MAX_GROUP_MEMBERS} people` }),
});

/**
 * The server's refusals that name its routes ("connect first (POST /network/request)"), in words
 * for a person; any other refusal keeps the server's own words.
 */
const REFUSALS: Record<string, string> = {
  not_connected: "You are not connected with this person. You can write to people once you are contacts.",
  user_not_found: "There is no one with that username.",
  cannot_message_self: "That is you: choose someone else.",
  group_not_found: GONE,
  no_members: "Choose at least one person besides you.",
  message_request_limit:
    "You have written to too many people you are not connected with today. Try again tomorrow, or ask them to connect first.",
  message_request_not_found: "This request is no longer there.",
  request_already_resolved: "This request was already answered, perhaps on another device.",
  group_full: `A group has at most ${MAX_GROUP_MEMBERS} people.`,
};

function inPlainWords(error: unknown): never {
  const refusal = (error as { cause?: unknown } | null)?.cause;
  const code = refusal instanceof TandemApiError ? refusal.body.error : undefined;
  const words = typeof code === "string" ? REFUSALS[code] : undefined;
  throw words ? new Error(words, { cause: refusal }) : error;
}

function refusalCode(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown } | null)?.cause ?? error;
  return cause instanceof TandemApiError && typeof cause.body.error === "string" ? cause.body.error : undefined;
}
const notConnected = (error: unknown) => refusalCode(error) === "not_connected";
const isBadRequest = (error: unknown) => refusalCode(error) === "invalid_request";

/** A 404 on one conversation: it was left or removed (or never the owner's). */
function conversationGone(error: unknown): never {
  if (isRouteMissing(error)) throw new Error(INBOX_UNSUPPORTED, { cause: error });
  if (isObjectMissing(error)) throw new Error(GONE, { cause: error });
  throw error;
}

/**
 * The inbox's server calls: conversations with people and groups, and writing as the owner.
 * `onRead` is told when the unread count moved (marked read, or written into).
 */
export function createInboxFacet(session: SessionService, onRead: () => void = () => {}): InboxFacet {
  const signedIn = () => {
    const client = session.client();
    const credentials = session.credentials();
    if (!client || !credentials) throw new Error("Sign in first");
    return { client, userId: credentials.userId };
  };
  const call = <T>(request: () => Promise<T>) => connectionsCall(request, INBOX_OFFLINE).catch(inPlainWords);

  return {
    async listInbox(input) {
      const { view } = parseInput("listInbox", ViewInput, input);
      const { client } = signedIn();
      // `all` on the server also holds the personal agent's threads, which could crowd people out of a page: ask per view.
      const views = view === "all" ? (["coo", "group"] as const) : [view];
      try {
        const answers = await Promise.all(
          views.map((one) => call(() => client.call("listConversations", { query: { view: one, limit: 100, messages: 1 } }))),
        );
        const conversations = answers
          .flatMap((answer) => readAnswer(ConversationList, answer, "conversations").conversations.map(inboxConversation))
          .filter((conversation): conversation is InboxConversation => conversation !== null)
          .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
        const unreadTotal = answers.reduce((sum, answer) => sum + unreadOf(answer), 0);
        return { supported: true, conversations, unreadTotal };
      } catch (error) {
        if (isRouteMissing(error)) return { supported: false, conversations: [], unreadTotal: 0 };
        throw error;
      }
    },

    async openInboxConversation(input) {
      const { conversationId } = parseInput("openInboxConversation", IdInput, input);
      const { client, userId } = signedIn();
      const answer = await call(() => client.call("getConversation", { params: { id: conversationId } })).catch(conversationGone);
      const detail = inboxConversationDetail(readAnswer(OneConversation, answer, "the conversation").conversation, userId);
      // The personal agent's conversations are read in the Agent section.
      if (!detail) throw new Error("That conversation is with your own agent: open it in the Agent section.");
      return detail;
    },

    async markInboxRead(input) {
      const { conversationId } = parseInput("markInboxRead", IdInput, input);
      const { client } = signedIn();
      await call(() => client.call("markConversationRead", { params: { id: conversationId } })).catch(conversationGone);
      onRead();
    },

    async replyInInbox(input) {
      const { conversationId, content, clientMessageId } = parseInput("replyInInbox", ReplyInput, input);
      const { client, userId } = signedIn();
      const answer = await call(() =>
        client.call("postConversationMessage", { params: { id: conversationId }, body: { content, clientMessageId } }),
      ).catch(conversationGone);
      onRead(); // Writing marks everything before it read.
      return inboxMessage(answer.message, userId);
    },

    async sendInboxMessage(input) {
      const { to, message } = parseInput("sendInboxMessage", SendInput, input);
      const { client } = signedIn();
      const asPerson = (conversationId: number) =>
        call(() =>
          client.call("postConversationMessage", {
            params: { id: conversationId },
            body: { content: message, clientMessageId: randomUUID() },
          }),
        ).then(() => ({ conversationId }));
      const viaHumanMode = async () => {
        const answer = await call(() => client.call("agentMessage", { body: { to, message } }));
        onRead();
        return { conversationId: answer.conversationId };
      };
      try {
        // A group, or a person already talked with: written as the owner, into that conversation.
        const group = /^group:(\d+)$/.exec(to);
        if (group) return await asPerson(Number(group[1]));
        const existing = await call(() =>
          client.call("listConversations", { query: { view: "coo", contact: to.replace(/^@/, ""), limit: 1, messages: 0 } }),
        );
        const conversation = existing.conversations?.[0];
        // Not (or no longer) connected: the message goes as human mode, which the server holds as a message request.
        if (conversation)
          return await asPerson(conversation.conversationId).catch((error: unknown) =>
            notConnected(error) ? viaHumanMode() : Promise.reject(error),
          );
        // The first message to someone opens the pair's conversation: only the server's human mode does that.
        return await viaHumanMode();
      } catch (error) {
        if (isRouteMissing(error)) throw new Error(INBOX_UNSUPPORTED, { cause: error });
        if (isObjectMissing(error) && to.startsWith("group:")) throw new Error(GONE, { cause: error });
        throw error;
      }
    },

    async listInboxContacts() {
      const { client } = signedIn();
      try {
        const { network } = await call(() => client.call("networkOverview"));
        const contacts: InboxPerson[] = network.contacts.map((contact) => ({
          userId: contact.userId,
          username: contact.username,
          name: contact.name || contact.username,
        }));
        return { contacts };
      } catch (error) {
        if (lacksScope(error)) return { contacts: [], notAllowed: CONTACTS_NOT_ALLOWED };
        if (isRouteMissing(error)) return { contacts: [] };
        throw error;
      }
    },

    async createInboxGroup(input) {
      const { name, members } = parseInput("createInboxGroup", GroupInput, input);
      const { client } = signedIn();
      const answer = await call(() => client.call("createGroup", { body: { name, members } })).catch((error: unknown) => {
        if (isRouteMissing(error)) throw new Error(INBOX_UNSUPPORTED, { cause: error });
        throw error;
      });
      return { conversationId: answer.group.id };
    },

    async listInboxRequests() {
      const { client } = signedIn();
      try {
        const answer = await call(() => client.call("listMessageRequests", { query: { limit: 50 } }));
        const requests = answer.requests.map((request) => ({
          requestId: request.id,
          from: { userId: request.from.userId, username: request.from.username, name: request.from.name || request.from.username },
          conversationId: request.conversationId,
          messageCount: request.messageCount,
          messages: request.messages.map((m) => ({ id: m.id, content: m.content, createdAt: m.createdAt })),
          updatedAt: request.updatedAt,
        }));
        return { supported: true, requests };
      } catch (error) {
        // An older server answers 400 (`requests` taken for a conversation id) or 404: it has no message requests.
        if (isRouteMissing(error) || isBadRequest(error)) return { supported: false, requests: [] };
        throw error;
      }
    },

    async answerInboxRequest(input) {
      const { requestId, action } = parseInput("answerInboxRequest", AnswerInput, input);
      const { client } = signedIn();
      const route = ({ accept: "acceptMessageRequest", ignore: "ignoreMessageRequest", block: "blockMessageRequest" } as const)[action];
      const answer = await call(() => client.call(route, { params: { id: requestId } }));
      if (action === "accept") onRead();
      return {
        status: answer.status,
        conversationId: answer.conversationId,
        message: `${DONE_WORDS[action]}: ${answer.message}`,
      };
    },

    async leaveInboxGroup(input) {
      const { conversationId } = parseInput("leaveInboxGroup", IdInput, input);
      const { client } = signedIn();
      await call(() => client.call("leaveGroup", { params: { id: conversationId } })).catch((error: unknown) => {
        // Not a member any more (left on another device, or removed): what the owner asked for is done.
        if (isObjectMissing(error)) return;
        if (isRouteMissing(error)) throw new Error(INBOX_UNSUPPORTED, { cause: error });
        throw error;
      });
      onRead();
    },
  };
}
