import type { Kysely } from "kysely";
import { hashSecret } from "../../auth/secret-token";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { isShareTokenShaped, tokenOf } from "./share-links";

interface SessionListing {
  shareToken?: string;
  limit: number;
  offset: number;
}

/** Sessions on the owner's own links only; `sessionId` narrows to one. */
function ownSessions(db: Kysely<Schema>, ownerId: number) {
  return db
    .selectFrom("guest_sessions as s")
    .innerJoin("share_links as l", "l.id", "s.link_id")
    .leftJoin("users as u", "u.id", "s.visitor_user_id")
    .select([
      "s.id",
      "s.session_id",
      "s.visitor_user_id",
      "s.visitor_name",
      "s.fingerprint",
      "s.message_count",
      "s.created_at",
      "s.last_active_at",
      "l.label",
      "l.token_sealed",
      "l.id as link_id",
      "u.username",
      // Every message of the session, the guest's and the answers (message_count is the guest's
      // alone: it is what the per-session limit counts).
      (eb) =>
        eb
          .selectFrom("guest_messages as m")
          .select((m) => m.fn.countAll<number | string | bigint>().as("n"))
          .whereRef("m.session_id", "=", "s.id")
          .as("message_total"),
    ])
    .where("l.owner_id", "=", ownerId);
}

type SessionRow = Awaited<ReturnType<ReturnType<typeof ownSessions>["execute"]>>[number];

async function rowsToListing(app: AppContext, rows: SessionRow[]) {
  const tokens = new Map<number, string>();
  const result = [];
  for (const row of rows) {
    const linkId = Number(row.link_id);
    if (!tokens.has(linkId)) tokens.set(linkId, tokenOf(app, { token_sealed: row.token_sealed } as never));
    const last = await app.db
      .selectFrom("guest_messages")
      .select(["role", "content", "created_at"])
      .where("session_id", "=", row.id)
      .orderBy("id", "desc")
      .executeTakeFirst();
    result.push({
      sessionId: row.session_id,
      shareToken: tokens.get(linkId) as string,
      linkLabel: row.label,
      guestName: row.visitor_name,
      visitor: {
        name: row.visitor_name,
        username: row.username ?? null,
        userId: row.visitor_user_id === null ? null : String(row.visitor_user_id),
        fingerprint: row.fingerprint,
      },
      messageCount: Number(row.message_total ?? 0),
      lastRole: last?.role ?? null,
      lastContent: last?.content ?? null,
      lastCreatedAt: last?.created_at ?? null,
      lastMessage: last ? { role: last.role, content: last.content } : null,
      createdAt: row.created_at,
      lastActiveAt: row.last_active_at,
    });
  }
  return result;
}

export async function listGuestConversations(app: AppContext, ownerId: number, query: SessionListing) {
  let select = ownSessions(app.db, ownerId);
  if (query.shareToken !== undefined) {
    // A token that is not one of the caller's links lists nothing, as an unknown one does.
    if (!isShareTokenShaped(query.shareToken)) return [];
    select = select.where("l.token_hash", "=", hashSecret(query.shareToken));
  }
  const rows = await select.orderBy("s.last_active_at", "desc").orderBy("s.id", "desc").limit(query.limit).offset(query.offset).execute();
  return rowsToListing(app, rows);
}

export async function guestTranscript(app: AppContext, ownerId: number, sessionId: string) {
  const row = await ownSessions(app.db, ownerId).where("s.session_id", "=", sessionId).executeTakeFirst();
  if (!row) throw new ApiError(404, "session_not_found", `Guest conversation ${sessionId} not found`);
  const [session] = await rowsToListing(app, [row]);
  const messages = await app.db
    .selectFrom("guest_messages")
    .select(["id", "role", "content", "answered_by", "created_at"])
    .where("session_id", "=", row.id)
    .orderBy("id")
    .execute();
  return {
    session,
    messages: messages.map((m) => ({
      id: Number(m.id),
      role: m.role,
      content: m.content,
      answeredBy: m.answered_by,
      createdAt: m.created_at,
    })),
  };
}

/** How many recent sessions the overview reads to find its visitors (older ones drop off it). */
const RECENT_SESSIONS_READ = 1000;

/**
 * The most recently active visitors of the owner's links, for the overview: one entry per visitor
 * and link (a visitor is an account when signed in, else a fingerprint, as the analytics count
 * them), however many sessions they had, with their latest session and totals.
 */
export async function recentVisitors(app: AppContext, ownerId: number, limit = 50) {
  const rows = await ownSessions(app.db, ownerId)
    .orderBy("s.last_active_at", "desc")
    .orderBy("s.id", "desc")
    .limit(RECENT_SESSIONS_READ)
    .execute();
  const tokens = new Map<number, string>();
  const visitors = new Map<
    string,
    {
      sessionId: string;
      shareToken: string;
      linkLabel: string | null;
      fingerprint: string;
      guestName: string | null;
      username: string | null;
      sessions: number;
      messages: number;
      lastActiveAt: string;
    }
  >();
  for (const row of rows) {
    const linkId = Number(row.link_id);
    const who = row.visitor_user_id !== null ? `u${row.visitor_user_id}` : `f${row.fingerprint}`;
    const key = `${linkId}:${who}`;
    const messages = Number(row.message_total ?? 0);
    const seen = visitors.get(key);
    if (seen) {
      // Rows come most recent first: the first one seen is the visitor's latest session.
      seen.sessions += 1;
      seen.messages += messages;
      seen.guestName ??= row.visitor_name;
      continue;
    }
    if (visitors.size >= limit) continue;
    if (!tokens.has(linkId)) tokens.set(linkId, tokenOf(app, { token_sealed: row.token_sealed } as never));
    visitors.set(key, {
      sessionId: row.session_id,
      shareToken: tokens.get(linkId) as string,
      linkLabel: row.label,
      fingerprint: row.fingerprint,
      guestName: row.visitor_name,
      username: row.username ?? null,
      sessions: 1,
      messages,
      lastActiveAt: row.last_active_at,
    });
  }
  return [...visitors.values()];
}
