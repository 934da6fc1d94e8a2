import type { ShareExpiresIn, ShareLinkCreate, ShareLinkUpdate, ShareLinkView } from "@tandem/core";
import { type Kysely, type Selectable, sql } from "kysely";
import type { z } from "zod";
import { hashSecret, randomBase62 } from "../../auth/secret-token";
import type { AppContext } from "../../context";
import type { Schema, ShareLinksTable } from "../../db/schema";
import { ApiError, badRequest, notFound } from "../../http/errors";
import { listFolders } from "../../workspace/folders/folders-service";
import { getOwnedNote } from "../../workspace/notes/notes-service";

export type ShareLinkRow = Selectable<ShareLinksTable>;
type CreateBody = z.output<typeof ShareLinkCreate>;
type UpdateBody = z.output<typeof ShareLinkUpdate>;

/** The token's length and alphabet are the wire format: 10 base62 characters, about 59.5 bits. */
export const SHARE_TOKEN_LENGTH = 10;
const SHARE_TOKEN = /^[A-Za-z0-9]{10}$/;
/** What the sealed copy of a token is for (the SecretBox binds it). */
const SEAL_PURPOSE = "share-link-token";

const EXPIRY_MS: Record<ShareExpiresIn, number | null> = {
  "1h": 3_600_000,
  "24h": 86_400_000,
  "7d": 7 * 86_400_000,
  "30d": 30 * 86_400_000,
  "90d": 90 * 86_400_000,
  never: null,
};

export function isShareTokenShaped(token: string): boolean {
  return SHARE_TOKEN.test(token);
}

function expiryFrom(app: AppContext, expiresIn: ShareExpiresIn): string | null {
  const ms = EXPIRY_MS[expiresIn];
  return ms === null ? null : app.clock.isoIn(ms);
}

/** Live: not revoked and not expired. Every path that honours a link asks this one question. */
export function isLive(app: AppContext, link: Pick<ShareLinkRow, "revoked_at" | "expires_at">): boolean {
  return link.revoked_at === null && (link.expires_at === null || Date.parse(link.expires_at) > app.clock.nowMs());
}

/**
 * The live link a token names, or null: unknown, expired and revoked are the same null, so a
 * caller cannot tell them apart. Found by the token's hash, so the lookup never compares secrets.
 */
export async function findLiveLink(app: AppContext, token: string): Promise<ShareLinkRow | null> {
  if (!isShareTokenShaped(token)) return null;
  const row = await app.db.selectFrom("share_links").selectAll().where("token_hash", "=", hashSecret(token)).executeTakeFirst();
  return row && isLive(app, row) ? row : null;
}

/** The link by id if it is live (a session's link, looked up again on every use). */
export async function liveLinkById(app: AppContext, id: number): Promise<ShareLinkRow | null> {
  const row = await app.db.selectFrom("share_links").selectAll().where("id", "=", id).executeTakeFirst();
  return row && isLive(app, row) ? row : null;
}

export function tokenOf(app: AppContext, link: ShareLinkRow): string {
  return app.secrets.open(link.token_sealed, SEAL_PURPOSE);
}

/** Folders a link names must be the owner's own (not shared with them, not trashed). */
async function checkFolders(db: Kysely<Schema>, ownerId: number, folderIds: readonly number[]): Promise<void> {
  const own = new Set((await listFolders(db, ownerId)).filter((f) => !f.shared).map((f) => f.id));
  for (const id of folderIds) if (!own.has(id)) throw notFound(`folder ${id}`);
}

export async function createShareLink(app: AppContext, ownerId: number, body: CreateBody): Promise<ShareLinkRow> {
  const scope = body.scope ?? (body.target === "note" ? "note_only" : "all");
  const folderIds = scope === "folders" ? [...new Set(body.folderIds ?? [])] : [];
  if (scope === "folders") await checkFolders(app.db, ownerId, folderIds);
  let noteId: number | null = null;
  if (scope === "note_only") {
    if (body.notesAccess !== "read") throw badRequest("note_link_read_only", "A link to one note is read only: notesAccess must be read");
    noteId = (await getOwnedNote(app.db, ownerId, body.noteId as number)).id;
  }
  const now = app.clock.iso();
  // 59.5 bits: a clash is astronomically unlikely, but the unique index would turn one into a 500.
  for (let attempt = 0; ; attempt++) {
    const token = randomBase62(SHARE_TOKEN_LENGTH);
    const inserted = await app.db
      .insertInto("share_links")
      .values({
        owner_id: ownerId,
        token_hash: hashSecret(token),
        token_sealed: app.secrets.seal(token, SEAL_PURPOSE),
        target: body.target,
        scope,
        folder_ids: JSON.stringify(folderIds),
        note_id: noteId,
        access: body.access,
        notes_access: body.notesAccess,
        label: body.label,
        require_sign_in: body.requireSignIn ? 1 : 0,
        email: body.email ? 1 : 0,
        todos: body.todos ? 1 : 0,
        tools: JSON.stringify(body.tools),
        identity: body.identity ? 1 : 0,
        local_agent: body.localAgent ? 1 : 0,
        expires_at: expiryFrom(app, body.expiresIn),
        revoked_at: null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column("token_hash").doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) return inserted;
    if (attempt >= 3) throw new ApiError(503, "token_unavailable", "Could not draw a fresh token; retry");
  }
}

/** The owner's link (live or not); anyone else's is the same 404 as none. */
export async function getOwnLink(db: Kysely<Schema>, ownerId: number, id: number): Promise<ShareLinkRow> {
  const row = await db.selectFrom("share_links").selectAll().where("id", "=", id).where("owner_id", "=", ownerId).executeTakeFirst();
  if (!row) throw notFound(`share link ${id}`);
  return row;
}

export async function updateShareLink(app: AppContext, ownerId: number, id: number, body: UpdateBody): Promise<ShareLinkRow> {
  const link = await getOwnLink(app.db, ownerId, id);
  if (link.revoked_at !== null) throw new ApiError(409, "link_revoked", "This share link was revoked; create a new one");
  if (link.scope === "note_only" && body.notesAccess !== undefined && body.notesAccess !== "read") {
    throw badRequest("note_link_read_only", "A link to one note is read only: notesAccess must be read");
  }
  const flag = (value: boolean | undefined) => (value === undefined ? undefined : value ? 1 : 0);
  const changes = {
    label: body.label,
    expires_at: body.expiresIn === undefined ? undefined : expiryFrom(app, body.expiresIn),
    require_sign_in: flag(body.requireSignIn),
    access: body.access,
    notes_access: body.notesAccess,
    email: flag(body.email),
    todos: flag(body.todos),
    tools: body.tools === undefined ? undefined : JSON.stringify(body.tools),
    identity: flag(body.identity),
    local_agent: flag(body.localAgent),
  };
  // Only what was sent changes: undefined values are left out of the update.
  const set = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  return app.db
    .updateTable("share_links")
    .set({ ...set, updated_at: app.clock.iso() })
    .where("id", "=", id)
    .where("owner_id", "=", ownerId)
    .where("revoked_at", "is", null)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Revokes at once: every path reads the link again on every request, so the next page load,
 * message, continuation, redemption or bridge reply after this answer is refused. The contacts
 * and agent permissions the link made end with it (see `link-bound.ts`).
 */
export async function revokeShareLink(app: AppContext, ownerId: number, id: number): Promise<string> {
  const link = await getOwnLink(app.db, ownerId, id);
  if (link.revoked_at !== null) return link.revoked_at;
  const now = app.clock.iso();
  await app.db
    .updateTable("share_links")
    .set({ revoked_at: now, updated_at: now })
    .where("id", "=", id)
    .where("revoked_at", "is", null)
    .execute();
  // Guest messages still waiting for the owner's machine will never be answered by it now.
  await app.db
    .updateTable("guest_messages")
    .set({ local_state: "expired" })
    .where("local_state", "=", "pending")
    .where("session_id", "in", (eb) => eb.selectFrom("guest_sessions").select("id").where("link_id", "=", id))
    .execute();
  await endLinkContacts(app.db, id);
  return now;
}

/** Deletes the contacts and agent permission a link made (`POST /network/connect`): the link ended. */
export async function endLinkContacts(db: Kysely<Schema>, linkId: number): Promise<void> {
  await db.deleteFrom("contact_permissions").where("share_link_id", "=", linkId).execute();
  await db.deleteFrom("contacts").where("share_link_id", "=", linkId).execute();
}

export async function listShareLinks(
  app: AppContext,
  ownerId: number,
  status: "active" | "revoked" | "all",
  limit: number,
): Promise<ShareLinkRow[]> {
  // Expiry is a time, not a flag: filter after reading, newest first, and stop at `limit`.
  const rows = await app.db.selectFrom("share_links").selectAll().where("owner_id", "=", ownerId).orderBy("id", "desc").execute();
  const wanted = rows.filter((row) => status === "all" || (status === "active") === isLive(app, row));
  return wanted.slice(0, limit);
}

export interface LinkAnalytics {
  uniqueVisitors: number;
  totalConversations: number;
  totalMessages: number;
}

/**
 * Sessions, messages (the guests' and the answers, as a conversation's messageCount counts them)
 * and distinct visitors (by account, else by fingerprint) per link, counted by the database.
 */
export async function analyticsFor(db: Kysely<Schema>, linkIds: readonly number[]): Promise<Map<number, LinkAnalytics>> {
  const result = new Map<number, LinkAnalytics>();
  if (linkIds.length === 0) return result;
  const rows = await db
    .selectFrom("guest_sessions as s")
    .select((eb) => [
      "s.link_id",
      eb.fn.countAll<number | string | bigint>().as("sessions"),
      eb
        .selectFrom("guest_messages as m")
        .innerJoin("guest_sessions as ms", "ms.id", "m.session_id")
        .select((m) => m.fn.countAll<number | string | bigint>().as("n"))
        .whereRef("ms.link_id", "=", "s.link_id")
        .as("messages"),
      sql<number | string | bigint>`count(distinct coalesce('u' || cast(s.visitor_user_id as text), 'f' || s.fingerprint))`.as("visitors"),
    ])
    .where("s.link_id", "in", [...linkIds])
    .groupBy("s.link_id")
    .execute();
  for (const row of rows) {
    result.set(Number(row.link_id), {
      uniqueVisitors: Number(row.visitors),
      totalConversations: Number(row.sessions),
      totalMessages: Number(row.messages ?? 0),
    });
  }
  return result;
}

/** The capabilities in the interface's words. */
export function capabilitiesOf(link: ShareLinkRow) {
  return {
    notes: link.notes_access === "read" ? "read" : "write",
    calendar: link.access === "read" ? "none" : link.access === "read_calendar" ? "free_busy" : "read_write",
    email: link.email === 1,
    todos: link.todos === 1,
    tools: JSON.parse(link.tools) as string[],
  };
}

/** Where people reach this server: the configured public URL, else the origin the request used. */
export function publicOrigin(app: AppContext, req: { protocol: string; get(name: string): string | undefined }): string {
  return app.config.publicUrl?.replace(/\/+$/, "") ?? `${req.protocol}://${req.get("host")}`;
}

export function linkView(app: AppContext, link: ShareLinkRow, origin: string, analytics?: LinkAnalytics): ShareLinkView {
  const token = tokenOf(app, link);
  const a = analytics ?? { uniqueVisitors: 0, totalConversations: 0, totalMessages: 0 };
  return {
    id: Number(link.id),
    token,
    url: `${origin}/a/${token}`,
    agentUrl: `${origin}/api/chat/guest-v04?token=${token}`,
    target: link.target,
    scope: link.scope,
    folderIds: JSON.parse(link.folder_ids) as number[],
    noteId: link.note_id === null ? null : Number(link.note_id),
    access: link.access,
    notesAccess: link.notes_access,
    label: link.label,
    requireSignIn: link.require_sign_in === 1,
    identity: link.identity === 1,
    localAgent: link.local_agent === 1,
    capabilities: capabilitiesOf(link),
    isActive: isLive(app, link),
    expiresAt: link.expires_at,
    revokedAt: link.revoked_at,
    createdAt: link.created_at,
    updatedAt: link.updated_at,
    analytics: { ...a, visitors: a.uniqueVisitors, sessions: a.totalConversations, messages: a.totalMessages },
  };
}
