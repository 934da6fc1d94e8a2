import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { findPerson, visibleConversation } from "../../people/messaging/shared-conversations";
import { countConversations, listConversations, searchConversationMessages, shownTo } from "./conversation-listing";
import { getOwnConversation, markConversationRead } from "./conversation-store";

type ConversationRouteId = "listConversations" | "getConversation" | "markConversationRead" | "deleteConversation";

/** The newest messages one conversation read answers with. */
const MESSAGES_PER_READ = 1000;

export function conversationHandlers({ db, clock }: AppContext): RouteHandlers<ConversationRouteId> {
  return {
    listConversations: async ({ input, principal }) => {
      const { view, limit, q, contact } = input.query;
      // `contact`: conversations that person is in with the caller; an unknown name matches none.
      const memberId = contact ? ((await findPerson(db, contact))?.id ?? -1) : undefined;
      if (q) return { success: true, ...(await searchConversationMessages(db, principal.userId, view, q, limit, memberId)) };
      const [conversations, counts] = await Promise.all([
        listConversations(db, principal.userId, { view, limit, messagesPerConversation: input.query.messages, memberId }),
        countConversations(db, principal.userId, view),
      ]);
      return { success: true, conversations, ...counts };
    },
    getConversation: async ({ input, principal }) => {
      const { row } = await visibleConversation(db, principal.userId, input.params.id);
      const [conversation] = await listConversations(db, principal.userId, {
        view: "all",
        limit: 1,
        messagesPerConversation: MESSAGES_PER_READ,
        onlyId: row.id,
      });
      return { success: true, conversation };
    },
    markConversationRead: async ({ input, principal }) => {
      const { row, membership } = await visibleConversation(db, principal.userId, input.params.id);
      if (!membership) return { success: true, conversationId: row.id, markedRead: await markConversationRead(db, row.id, clock.iso()) };
      // Shared and group conversations keep read state per member: up to the newest message.
      const newest = await db
        .selectFrom("agent_messages")
        .select((eb) => eb.fn.max("id").as("id"))
        .where("conversation_id", "=", row.id)
        .executeTakeFirst();
      const unread = await db
        .selectFrom("agent_messages")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("conversation_id", "=", row.id)
        .where("id", ">", Number(membership.last_read_id))
        .where((eb) => eb.or([eb("sender_id", "is", null), eb("sender_id", "!=", String(principal.userId))]))
        .where(shownTo(principal.userId))
        .executeTakeFirst();
      await db
        .updateTable("conversation_members")
        .set({ last_read_id: Number(newest?.id ?? 0) })
        .where("conversation_id", "=", row.id)
        .where("user_id", "=", principal.userId)
        .execute();
      return { success: true, conversationId: row.id, markedRead: Number(unread?.n ?? 0) };
    },
    deleteConversation: async ({ input, principal }) => {
      // Only the personal agent's threads can be deleted; shared ones belong to both people.
      const row = await getOwnConversation(db, principal.userId, "agent", input.params.id);
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom("agent_messages").where("conversation_id", "=", row.id).execute();
        await trx.deleteFrom("agent_conversations").where("id", "=", row.id).execute();
      });
      return { success: true };
    },
  };
}
