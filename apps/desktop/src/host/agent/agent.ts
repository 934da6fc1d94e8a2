import { randomUUID } from "node:crypto";
import type { TandemClient } from "@tandem/core";
import { z } from "zod";
import type { ChatMessageItem } from "../../shared/desktop-api";
import type { AgentFacet } from "../facets";
import type { HostContext } from "../host-context";
import { onServer } from "../on-server";
import { parseInput } from "../parse-input";
import { AGENT_OFFLINE } from "./agent-messages";
import { createBriefingMethods } from "./briefing";
import type { ChatRun } from "./chat-run";
import { createHeartbeatMethods } from "./heartbeat";
import { HeartbeatWatch } from "./heartbeat-watch";
import { openChat } from "./open-chat";

export interface AgentHandle {
  readonly facet: AgentFacet;
  /** Unread messages from the agent, and the newest heartbeat message delivered while the app ran. */
  readonly heartbeat: Pick<HeartbeatWatch, "pendingCount" | "latest">;
  /** Stops every reply still being received, and the heartbeat's watch. */
  close(): void;
}

/** Conversations listed: the newest, as many as a sidebar shows. */
const CONVERSATION_PAGE = 100;
/** How long one `readChat` waits for something new before answering "nothing yet". */
const READ_WAIT_MS = 10_000;
/** A finished reply stays readable this long (the renderer reads its end at once; this covers a slow one). */
const KEEP_ENDED_MS = 5 * 60_000;

const ConversationInput = z.object({ conversationId: z.number().int().positive() });
const StartChatInput = z.object({
  message: z.string().refine((text) => text.trim().length > 0, { error: "must not be empty" }),
  conversationId: z.number().int().positive().optional(),
  userTimezone: z.string().min(1).max(64).optional(),
});
const ReadChatInput = z.object({ chatId: z.string().min(1).max(100), after: z.number().int().min(0) });
const StopChatInput = z.object({ chatId: z.string().min(1).max(100) });

type ServerMessage = {
  id: number;
  role: "user" | "assistant";
  content: string;
  status: "complete" | "incomplete";
  toolsUsed: string[];
  createdAt: string;
};

function messageItem(message: ServerMessage): ChatMessageItem {
  const { id, role, content, status, toolsUsed, createdAt } = message;
  return { id, role, content, status, toolsUsed, createdAt };
}

/**
 * The personal agent and the briefing. Both run on the server; the host is the renderer's way
 * there (it holds the key). A chat's reply streams: the host reads it into a {@link ChatRun} that
 * the renderer follows with `readChat`, and `stopChat` aborts the request, which tells the server
 * to keep the partial answer as incomplete.
 */
export function startAgent(context: HostContext): AgentHandle {
  const runs = new Map<string, ChatRun>();
  const watch = new HeartbeatWatch(context, () => context.events.emit("status"));

  const signedIn = (): TandemClient => {
    const client = context.session.client();
    if (!client) throw new Error("Sign in first");
    return client;
  };
  const closeAll = () => {
    for (const run of runs.values()) run.close();
  };
  // A reply belongs to the account that asked; signing out (or in as someone else) ends it.
  context.session.onChange(closeAll);

  const runOf = (chatId: string): ChatRun => {
    const run = runs.get(chatId);
    if (!run) throw new Error("This reply is no longer available; open the conversation again to see what was saved");
    return run;
  };

  const facet: AgentFacet = {
    async listConversations() {
      const client = signedIn();
      const answer = await onServer(
        () => client.call("listConversations", { query: { view: "me", limit: CONVERSATION_PAGE, messages: 0 } }),
        AGENT_OFFLINE,
      );
      const thread = watch.thread();
      return (answer.conversations ?? []).map(({ conversationId, title, messageCount, unreadCount, updatedAt }) => ({
        conversationId,
        title,
        messageCount,
        unreadCount,
        heartbeat: conversationId === thread,
        updatedAt,
      }));
    },

    async getConversation(input) {
      const { conversationId } = parseInput("getConversation", ConversationInput, input);
      const client = signedIn();
      const { conversation } = await onServer(() => client.call("getConversation", { params: { id: conversationId } }), AGENT_OFFLINE);
      return { conversationId: conversation.conversationId, title: conversation.title, messages: conversation.messages.map(messageItem) };
    },

    async deleteConversation(input) {
      const { conversationId } = parseInput("deleteConversation", ConversationInput, input);
      const client = signedIn();
      await onServer(() => client.call("deleteConversation", { params: { id: conversationId } }), AGENT_OFFLINE);
    },

    async startChat(input) {
      const request = parseInput("startChat", StartChatInput, input);
      const credentials = context.session.credentials();
      if (!credentials) throw new Error("Sign in first");
      const run = await openChat(credentials, request);
      const chatId = randomUUID();
      runs.set(chatId, run);
      void run.whenEnded().then(() => setTimeout(() => runs.delete(chatId), KEEP_ENDED_MS).unref());
      return { chatId };
    },

    async readChat(input) {
      const { chatId, after } = parseInput("readChat", ReadChatInput, input);
      return runOf(chatId).read(after, READ_WAIT_MS);
    },

    async stopChat(input) {
      const { chatId } = parseInput("stopChat", StopChatInput, input);
      // Already over and forgotten: there is nothing left to stop.
      runs.get(chatId)?.stop();
    },

    async markConversationRead(input) {
      const { conversationId } = parseInput("markConversationRead", ConversationInput, input);
      const client = signedIn();
      await onServer(() => client.call("markConversationRead", { params: { id: conversationId } }), AGENT_OFFLINE);
      // The badges follow at once rather than at the next poll.
      await watch.refresh();
    },

    ...createBriefingMethods(context.session),
    // After a run, the count and the thread are read again before it answers: the page then sees both.
    ...createHeartbeatMethods(context.session, () => watch.refresh()),
  };

  watch.start();
  return {
    facet,
    heartbeat: watch,
    close() {
      closeAll();
      watch.close();
    },
  };
}
