import type { AppContext } from "../../context";
import { ApiError, notFound } from "../../http/errors";
import { linkNotFound } from "./share-guard";
import { capabilitiesOf, isLive, liveLinkById, tokenOf } from "./share-links";

/** Earlier messages of the session given with a pending one, so the local agent has the thread. */
const HISTORY = 10;

/**
 * Guest messages on the owner's live links answered by their own machine, waiting for it. The
 * bridge hands `content` to the local coding agent as untrusted text: it is a guest's words.
 */
export async function pendingGuestMessages(app: AppContext, ownerId: number, limit: number) {
  const rows = await app.db
    .selectFrom("guest_messages as m")
    .innerJoin("guest_sessions as s", "s.id", "m.session_id")
    .innerJoin("share_links as l", "l.id", "s.link_id")
    .selectAll("l")
    .select([
      "m.id as message_id",
      "m.content as message_content",
      "m.created_at as message_created_at",
      "m.session_id as session_row",
      "s.session_id as public_session",
      "s.visitor_name",
    ])
    .where("m.owner_id", "=", ownerId)
    .where("l.owner_id", "=", ownerId)
    .where("m.local_state", "=", "pending")
    // Older than the wait: the guest was answered by the server (or left); not the bridge's any more.
    .where("m.created_at", ">", new Date(app.clock.nowMs() - app.config.guestLocalWaitMs).toISOString())
    .orderBy("m.id")
    .limit(limit)
    .execute();
  const messages = [];
  for (const row of rows) {
    // Expiry is a time: a link that lapsed while the message waited is out, as revoked ones are.
    if (!isLive(app, row)) continue;
    const history = await app.db
      .selectFrom("guest_messages")
      .select(["role", "content"])
      .where("session_id", "=", row.session_row)
      .where("id", "<", row.message_id)
      .orderBy("id", "desc")
      .limit(HISTORY)
      .execute();
    messages.push({
      messageId: Number(row.message_id),
      sessionId: row.public_session,
      shareToken: tokenOf(app, row),
      linkLabel: row.label,
      guestName: row.visitor_name,
      content: row.message_content,
      capabilities: capabilitiesOf(row),
      history: history.reverse(),
      createdAt: row.message_created_at,
    });
  }
  return messages;
}

/**
 * The owner's machine answers a pending guest message. Refused when the message is not the
 * caller's (404), its link is no longer live (404), or it is no longer waiting (409: the guest
 * was answered by the server's agent after the wait, or it was answered already).
 */
export async function replyToGuest(app: AppContext, ownerId: number, messageId: number, body: string): Promise<void> {
  const message = await app.db
    .selectFrom("guest_messages as m")
    .innerJoin("guest_sessions as s", "s.id", "m.session_id")
    .select(["m.id", "m.session_id", "m.local_state", "s.link_id"])
    .where("m.id", "=", messageId)
    .where("m.owner_id", "=", ownerId)
    .where("m.role", "=", "user")
    .executeTakeFirst();
  if (!message) throw notFound(`guest message ${messageId}`);
  if (!(await liveLinkById(app, Number(message.link_id)))) throw linkNotFound();
  await app.db.transaction().execute(async (tx) => {
    const taken = await tx
      .updateTable("guest_messages")
      .set({ local_state: "answered" })
      .where("id", "=", messageId)
      .where("local_state", "=", "pending")
      .executeTakeFirst();
    if (taken.numUpdatedRows === 0n) {
      throw new ApiError(409, "not_pending", "This guest message is not waiting for an answer (answered already, or the wait ran out)");
    }
    await tx
      .insertInto("guest_messages")
      .values({
        session_id: Number(message.session_id),
        owner_id: ownerId,
        role: "assistant",
        content: body,
        answered_by: "local",
        local_state: null,
        created_at: app.clock.iso(),
      })
      .execute();
  });
}

/** Marks pending guest messages older than the wait (plus a minute) expired; run by maintenance. */
export async function expireStaleGuestMessages(app: AppContext): Promise<void> {
  const before = new Date(app.clock.nowMs() - app.config.guestLocalWaitMs - 60_000).toISOString();
  await app.db
    .updateTable("guest_messages")
    .set({ local_state: "expired" })
    .where("local_state", "=", "pending")
    .where("created_at", "<", before)
    .execute();
}
