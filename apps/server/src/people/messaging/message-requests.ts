import { MESSAGE_REQUEST_MESSAGES, MESSAGE_REQUESTS_PER_DAY } from "@tandem/core";
import type { Kysely, Selectable } from "kysely";
import { messageJson } from "../../agent/conversations/conversation-listing";
import type { MessageRow } from "../../agent/conversations/conversation-store";
import { recordAudit } from "../../audit/audit-log";
import type { Principal } from "../../auth/principal";
import type { AppContext } from "../../context";
import type { MessageRequestsTable, Schema } from "../../db/schema";
import type { EventBatch } from "../../delegation/realtime/event-log";
import { ApiError, conflict } from "../../http/errors";
import { enqueueWebhookEvent, summarize } from "../../webhooks/webhook-outbox";
import { befriend } from "../network/contact-requests";
import { loadPeople, type PersonRow, toNetworkPerson } from "../network/network-people";
import { lockPair } from "../network/pair-lock";
import { areConnected } from "../network/permissions";
import { areTeammates } from "../team/team-service";
import { displayName } from "./shared-conversations";

/**
 * Message requests (docs/messaging.md#message-requests). Human mode from someone the recipient is
 * neither connected with nor on the team with is delivered (200, fire-and-forget) but held: the
 * message is stored in the pair's conversation with its request's id, so the sender sees what they
 * sent, while the recipient sees it only in `GET /conversations/requests` until they accept. A
 * held message raises no `message` event and reaches no agent: the recipient reads it as text and
 * decides. Everything is in the database (the daily count too), so any instance answers alike.
 */

type Deps = Pick<AppContext, "db" | "database" | "clock" | "realtime">;
type RequestRow = Selectable<MessageRequestsTable>;

export const MESSAGE_REQUEST_EVENT = "message_request";
const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether `from` may write straight into `to`'s inbox: connected (contacts or agent access), or on the server's team together. */
export async function mayWriteDirectly(db: Kysely<Schema>, from: number, to: number): Promise<boolean> {
  return (await areConnected(db, from, to)) || (await areTeammates(db, from, to));
}

const requestNotFound = (id: number) =>
  new ApiError(404, "message_request_not_found", `Message request ${id} not found among the requests sent to you`);

/**
 * Opens (or adds to) the request from `sender` to `recipient` for a message about to be stored in
 * their conversation, and answers the request id to hold it under. A blocked sender gets the block's
 * id: their message is stored as always, so nothing tells them, and never shown. Opening a new
 * request counts against the sender's daily limit (429 past it); adding to a pending one does not.
 */
async function holdingRequest(deps: Deps, sender: PersonRow, recipient: PersonRow, conversationId: number) {
  return deps.db.transaction().execute(async (tx) => {
    // Locks both people's rows on PostgreSQL: one sender's openings (whoever to) queue on their own row, so the count holds.
    await lockPair(tx, deps.database.dialect, sender.id, recipient.id);
    const now = deps.clock.iso();
    const open = await tx
      .selectFrom("message_requests")
      .select(["id", "status"])
      .where("sender_id", "=", sender.id)
      .where("recipient_id", "=", recipient.id)
      .where("status", "in", ["pending", "blocked"])
      .orderBy("id", "desc")
      .executeTakeFirst();
    if (open) {
      await tx.updateTable("message_requests").set({ updated_at: now }).where("id", "=", open.id).execute();
      return { requestId: Number(open.id), pending: open.status === "pending" };
    }
    const since = new Date(deps.clock.now().getTime() - DAY_MS).toISOString();
    const opened = await tx
      .selectFrom("message_requests")
      .select("opened_at")
      .where("sender_id", "=", sender.id)
      .where("opened_at", ">", since)
      .orderBy("opened_at")
      .execute();
    if (opened.length >= MESSAGE_REQUESTS_PER_DAY) {
      const oldest = Date.parse(opened[0]?.opened_at ?? now);
      const retryAfter = Math.max(1, Math.ceil((oldest + DAY_MS - deps.clock.now().getTime()) / 1000));
      throw new ApiError(
        429,
        "message_request_limit",
        `You may open at most ${MESSAGE_REQUESTS_PER_DAY} message requests to people you are not connected with in 24 hours; retry after ${retryAfter} s, or connect first (POST /network/request)`,
        { "retry-after": String(retryAfter) },
      );
    }
    const inserted = await tx
      .insertInto("message_requests")
      .values({
        sender_id: sender.id,
        recipient_id: recipient.id,
        conversation_id: conversationId,
        status: "pending",
        opened_at: now,
        updated_at: now,
        resolved_at: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();
    return { requestId: Number(inserted.id), pending: true };
  });
}

/**
 * Stores a human-mode message to someone the sender may not write to directly, held by a request.
 * The recipient hears of a pending request (`message_request`, with no text: the text is read in the
 * requests view); of a blocked sender's message they hear nothing.
 */
export async function deliverAsRequest(
  deps: Deps,
  sender: PersonRow,
  recipient: PersonRow,
  conversationId: number,
  post: (requestId: number) => Promise<void>,
): Promise<void> {
  const { requestId, pending } = await holdingRequest(deps, sender, recipient, conversationId);
  await post(requestId);
  if (!pending) return;
  const events = deps.realtime.batch();
  await deps.db
    .transaction()
    .execute((tx) =>
      events.appendToUserStream(tx, recipient.id, MESSAGE_REQUEST_EVENT, { requestId, conversationId, from: toNetworkPerson(sender) }),
    );
  events.publish();
}

/** The pending message requests to `userId`, most recently written first, each with its newest held messages. */
export async function listMessageRequests(db: Kysely<Schema>, userId: number, limit: number) {
  const pending = db.selectFrom("message_requests").where("recipient_id", "=", userId).where("status", "=", "pending");
  const [rows, total] = await Promise.all([
    pending.selectAll().orderBy("updated_at", "desc").orderBy("id", "desc").limit(limit).execute(),
    pending.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirst(),
  ]);
  const people = await loadPeople(
    db,
    rows.map((row) => Number(row.sender_id)),
  );
  const requests = await Promise.all(
    rows.map(async (row) => {
      const id = Number(row.id);
      const [count, messages] = await Promise.all([
        db
          .selectFrom("agent_messages")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .where("request_id", "=", id)
          .executeTakeFirst(),
        db
          .selectFrom("agent_messages")
          .selectAll()
          .where("request_id", "=", id)
          .orderBy("id", "desc")
          .limit(MESSAGE_REQUEST_MESSAGES)
          .execute(),
      ]);
      const from = people.get(Number(row.sender_id));
      return from
        ? {
            id,
            from,
            conversationId: Number(row.conversation_id),
            status: "pending" as const,
            openedAt: row.opened_at,
            updatedAt: row.updated_at,
            messageCount: Number(count?.n ?? 0),
            messages: messages.reverse().map((m) => messageJson(m as MessageRow)),
          }
        : undefined;
    }),
  );
  return { requests: requests.filter((r) => r !== undefined), total: Number(total?.n ?? 0) };
}

export type RequestAction = "accept" | "ignore" | "block";
const STATUS_OF: Record<RequestAction, "accepted" | "ignored" | "blocked"> = { accept: "accepted", ignore: "ignored", block: "blocked" };

/**
 * The recipient answers a pending request. Accepting makes the two contacts (so later messages go
 * straight to the inbox) and shows the request's messages in their conversation; ignoring hides it
 * (a later message opens a new request); blocking hides it and holds every later message of the
 * sender, without telling them, until the two connect some other way. Someone else's request is 404.
 */
export async function resolveMessageRequest(deps: Deps, actor: Principal, requestId: number, action: RequestAction) {
  const events = deps.realtime.batch();
  const answer = await deps.db.transaction().execute(async (tx) => {
    const first = await tx.selectFrom("message_requests").selectAll().where("id", "=", requestId).executeTakeFirst();
    if (!first || Number(first.recipient_id) !== actor.userId) throw requestNotFound(requestId);
    await lockPair(tx, deps.database.dialect, Number(first.sender_id), actor.userId);
    const row: RequestRow = await tx.selectFrom("message_requests").selectAll().where("id", "=", requestId).executeTakeFirstOrThrow();
    if (row.status !== "pending") {
      throw conflict("request_already_resolved", `Message request ${requestId} is no longer pending: it was ${row.status}`);
    }
    const senderId = Number(row.sender_id);
    const sender = (await loadPeople(tx, [senderId])).get(senderId);
    if (!sender) throw requestNotFound(requestId);
    const now = deps.clock.iso();
    const status = STATUS_OF[action];
    await tx.updateTable("message_requests").set({ status, resolved_at: now, updated_at: now }).where("id", "=", row.id).execute();
    if (action === "accept") {
      await befriend(tx, actor.userId, senderId, now);
      await announceAccepted(tx, deps, events, actor.userId, Number(row.id));
    }
    await recordAudit(tx, deps.clock, {
      actor,
      action: `messaging.request.${action}`,
      objectType: "message_request",
      objectId: row.id,
      parties: [senderId, actor.userId],
    });
    const name = displayName({ id: senderId, username: sender.username, name: sender.name });
    const message =
      action === "accept"
        ? `You and ${name} are now contacts; their messages are in your inbox`
        : action === "ignore"
          ? `Ignored ${name}'s message request`
          : `Blocked ${name}: their messages will not reach you`;
    return { requestId: Number(row.id), status, from: sender, conversationId: Number(row.conversation_id), message };
  });
  events.publish();
  return answer;
}

/**
 * The request's messages reach the recipient's inbox now: `message.received` to their webhooks for
 * each (its newest {@link MESSAGE_REQUEST_MESSAGES}, oldest first, so a stranger's flood of held
 * messages cannot become a flood of deliveries), in the accepting transaction.
 */
async function announceAccepted(tx: Kysely<Schema>, deps: Deps, events: EventBatch, recipientId: number, requestId: number) {
  const held = await tx
    .selectFrom("agent_messages")
    .select(["id", "conversation_id", "sender_id", "sender_type", "content"])
    .where("request_id", "=", requestId)
    .orderBy("id", "desc")
    .limit(MESSAGE_REQUEST_MESSAGES)
    .execute();
  for (const message of held.reverse()) {
    await enqueueWebhookEvent(tx, events, deps.clock, recipientId, "message.received", {
      conversationId: Number(message.conversation_id),
      messageId: Number(message.id),
      fromUserId: Number(message.sender_id),
      senderType: message.sender_type,
      summary: summarize(message.content),
    });
  }
}
