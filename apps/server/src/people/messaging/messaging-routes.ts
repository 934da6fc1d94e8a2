import type { messageRequestRoutes, messagingRoutes } from "@tandem/core";
import { messageJson } from "../../agent/conversations/conversation-listing";
import type { MessageRow } from "../../agent/conversations/conversation-store";
import { presentedToken } from "../../auth/authenticator";
import { requireOAuthScope, type UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { resumeCursor } from "../../delegation/realtime/realtime-service";
import { userStream } from "../../delegation/realtime/sse-stream";
import { pruneUserEvents, readUserEvents } from "../../delegation/realtime/user-events";
import { forbidden } from "../../http/errors";
import { created } from "../../http/reply";
import { HANDLED, type RouteHandlers } from "../../http/router";
import { RpcSlots, sendAgentMessage } from "./agent-message";
import {
  addGroupMembers,
  createGroup,
  getGroup,
  groupMessagesAfter,
  leaveGroup,
  listGroups,
  removeGroupMember,
  renameGroup,
} from "./groups";
import { idempotencyKeyOf, pruneIdempotencyKeys, requestHash, runOncePerKey } from "./idempotency";
import { listMessageRequests, mayWriteDirectly, type RequestAction, resolveMessageRequest } from "./message-requests";
import { postMessages, visibleConversation } from "./shared-conversations";

/** Agent messaging, the human-post route, groups and the user-level realtime channel (issue 16). */
/** Writing to other people (messages, groups) needs `agent.message:send` when an OAuth app does it. */
function sendsAsThePerson(principal: UserPrincipal): undefined {
  requireOAuthScope(principal, "agent.message:send");
  return undefined;
}

export function messagingHandlers(context: AppContext): RouteHandlers<keyof typeof messagingRoutes | keyof typeof messageRequestRoutes> {
  const { db, clock } = context;
  const rpcSlots = new RpcSlots(context.shared);
  context.maintenance.add("messaging.prune", async () => {
    await pruneIdempotencyKeys(db, clock);
    await pruneUserEvents(db, clock);
  });
  const answerRequest = async (principal: UserPrincipal, id: number, action: RequestAction) =>
    sendsAsThePerson(principal) ?? { success: true as const, ...(await resolveMessageRequest(context, principal, id, action)) };
  return {
    agentMessage: async ({ input, principal, req, res }) => {
      sendsAsThePerson(principal);
      const key = idempotencyKeyOf(req.headers["idempotency-key"]);
      // The run stops when the caller goes away before the answer (a cancelled RPC stores nothing).
      const controller = new AbortController();
      const onClose = () => {
        if (!res.writableFinished) controller.abort();
      };
      res.once("close", onClose);
      try {
        const { body, replayed } = await runOncePerKey(db, clock, { userId: principal.userId, key, hash: requestHash(input.body) }, () =>
          sendAgentMessage(context, principal, input.body, controller.signal, rpcSlots),
        );
        if (replayed) res.setHeader("idempotent-replayed", "true");
        return body;
      } finally {
        res.off("close", onClose);
      }
    },
    agentStream: ({ input, principal, req, res }) => {
      const cursor = resumeCursor(input.query.cursor, req.headers["last-event-id"]);
      userStream(context, principal, presentedToken(req.headers) ?? "", cursor, req, res).start();
      return HANDLED;
    },
    agentEvents: async ({ input, principal }) => {
      const events = await readUserEvents(db, principal.userId, input.query.cursor, input.query.limit, principal.credential.scopes);
      return { success: true, events, cursor: events.at(-1)?.cursor ?? String(input.query.cursor) };
    },
    postConversationMessage: async ({ input, principal }) => {
      sendsAsThePerson(principal);
      const { row } = await visibleConversation(db, principal.userId, input.params.id);
      // A pair's conversation stays readable after they disconnect, but writing as oneself needs the
      // connection (or the team); a stranger writes through human mode, which holds it as a request.
      if (row.kind === "shared_agent") {
        const other = (row.pair_key ?? "")
          .split(":")
          .map(Number)
          .find((id) => id !== principal.userId);
        if (other === undefined || !(await mayWriteDirectly(db, principal.userId, other))) {
          throw forbidden("not_connected", "You are no longer connected with this person; connect again to write to them");
        }
      }
      const author = await db
        .selectFrom("users")
        .select(["id", "username", "name"])
        .where("id", "=", principal.userId)
        .executeTakeFirstOrThrow();
      const [posted] = await postMessages(
        context,
        [
          {
            conversationId: row.id,
            author: { id: Number(author.id), username: author.username, name: author.name },
            senderType: "human",
            role: "user",
            content: input.body.content,
            intent: input.body.intent ?? null,
            clientMessageId: input.body.clientMessageId,
          },
        ],
        { conversationType: row.kind === "agent" ? "direct" : row.kind, ...(row.kind === "group" ? { groupName: row.title } : {}) },
      );
      const { message, duplicate } = posted as NonNullable<typeof posted>;
      const answer = { success: true, conversationId: row.id, message, duplicate };
      return duplicate ? answer : created(answer);
    },
    listMessageRequests: async ({ input, principal }) => ({
      success: true,
      ...(await listMessageRequests(db, principal.userId, input.query.limit)),
    }),
    acceptMessageRequest: ({ input, principal }) => answerRequest(principal, input.params.id, "accept"),
    ignoreMessageRequest: ({ input, principal }) => answerRequest(principal, input.params.id, "ignore"),
    blockMessageRequest: ({ input, principal }) => answerRequest(principal, input.params.id, "block"),
    createGroup: async ({ input, principal }) =>
      sendsAsThePerson(principal) ??
      created({ success: true, group: await createGroup(context, principal, input.body.name, input.body.members) }),
    listGroups: async ({ principal }) => ({ success: true, groups: await listGroups(db, principal.userId) }),
    getGroup: async ({ input, principal }) => ({ success: true, group: await getGroup(db, input.params.id, principal.userId) }),
    renameGroup: async ({ input, principal }) =>
      sendsAsThePerson(principal) ?? {
        success: true,
        group: await renameGroup(context, principal, input.params.id, input.body.name),
      },
    addGroupMembers: async ({ input, principal }) =>
      sendsAsThePerson(principal) ?? {
        success: true,
        group: await addGroupMembers(context, principal, input.params.id, input.body.members),
      },
    removeGroupMember: async ({ input, principal }) =>
      sendsAsThePerson(principal) ?? {
        success: true,
        group: await removeGroupMember(context, principal, input.params.id, input.params.userId),
      },
    leaveGroup: async ({ input, principal }) =>
      sendsAsThePerson(principal) ?? { success: true, ...(await leaveGroup(context, principal, input.params.id)) },
    groupMessages: async ({ input, principal }) => {
      const rows = await groupMessagesAfter(db, principal.userId, input.params.id, input.query.after, input.query.limit);
      const messages = rows.map((row) => messageJson(row as MessageRow));
      return { success: true, groupId: input.params.id, messages, cursor: messages.at(-1)?.id ?? input.query.after };
    },
  };
}
