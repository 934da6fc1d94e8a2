import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { countConversations, listConversations, searchConversationMessages } from "./conversation-listing";
import { getOwnConversation, markConversationRead } from "./conversation-store";

type ConversationRouteId = "listConversations" | "getConversation" | "markConversationRead" | "deleteConversation";

/** The newest messages one conversation read answers with. */
const MESSAGES_PER_READ = 1000;

export function conversationHandlers({ db, clock }: AppContext): RouteHandlers<ConversationRouteId> {
  return {
    listConversations: async ({ input, principal }) => {
      const { view, limit, q } = input.query;
      if (q) return { success: true, ...(await searchConversationMessages(db, principal.userId, view, q, limit)) };
      const [conversations, counts] = await Promise.all([
        listConversations(db, principal.userId, { view, limit, messagesPerConversation: input.query.messages }),
        countConversations(db, principal.userId, view),
      ]);
      return { success: true, conversations, ...counts };
    },
    getConversation: async ({ input, principal }) => {
      const row = await getOwnConversation(db, principal.userId, "agent", input.params.id);
      const [conversation] = await listConversations(db, principal.userId, {
        view: "me",
        limit: 1,
        messagesPerConversation: MESSAGES_PER_READ,
        onlyId: row.id,
      });
      return { success: true, conversation };
    },
    markConversationRead: async ({ input, principal }) => {
      const row = await getOwnConversation(db, principal.userId, "agent", input.params.id);
      return { success: true, conversationId: row.id, markedRead: await markConversationRead(db, row.id, clock.iso()) };
    },
    deleteConversation: async ({ input, principal }) => {
      const row = await getOwnConversation(db, principal.userId, "agent", input.params.id);
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom("agent_messages").where("conversation_id", "=", row.id).execute();
        await trx.deleteFrom("agent_conversations").where("id", "=", row.id).execute();
      });
      return { success: true };
    },
  };
}
