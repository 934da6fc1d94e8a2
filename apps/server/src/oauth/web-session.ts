import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";

/**
 * A signed-in browser: the server's own pages (sign-in, consent, device approval) know the person
 * by this cookie instead of asking for an API key. The cookie holds a random secret; the database
 * holds only its SHA-256, so a stolen database opens no browser session. HttpOnly, SameSite=Lax,
 * Secure when the server is reached over https.
 */

export const SESSION_COOKIE = "tandem_session";
/** Double-submit token for forms shown before anyone is signed in (sign-in, first run). */
export const CSRF_COOKIE = "tandem_csrf";
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;

export interface WebSession {
  readonly userId: number;
  readonly username: string;
  /** What this session's forms must echo back. */
  readonly csrf: string;
}

function sha256(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(";")) {
    const index = part.indexOf("=");
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

/** Cookie attributes: Secure when the server's public address is https (or the request came over TLS). */
function cookieAttributes(secure: boolean, maxAgeSeconds: number): string {
  return `Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

function appendCookie(res: ServerResponse, cookie: string): void {
  const existing = res.getHeader("set-cookie");
  const list = Array.isArray(existing) ? existing : existing === undefined ? [] : [String(existing)];
  res.setHeader("set-cookie", [...list, cookie]);
}

/** Equal strings, compared in constant time. */
export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class WebSessions {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly secure: boolean,
  ) {}

  /** The session a request's cookie names, if it is still valid. */
  async find(req: IncomingMessage): Promise<WebSession | null> {
    const value = readCookie(req, SESSION_COOKIE);
    if (!value || value.length > 100) return null;
    const row = await this.db
      .selectFrom("web_sessions")
      .innerJoin("users", "users.id", "web_sessions.user_id")
      .select(["web_sessions.user_id", "web_sessions.csrf", "web_sessions.expires_at", "users.username"])
      .where("web_sessions.id_hash", "=", sha256(value))
      .executeTakeFirst();
    if (!row || row.expires_at <= new Date().toISOString()) return null;
    return { userId: row.user_id, username: row.username, csrf: row.csrf };
  }

  /** Signs a browser in: a new session (never one the browser brought along) and its cookie. */
  async create(res: ServerResponse, userId: number): Promise<WebSession & { username?: string }> {
    const value = randomBytes(32).toString("base64url");
    const csrf = randomBytes(24).toString("base64url");
    const now = Date.now();
    await this.db
      .insertInto("web_sessions")
      .values({
        id_hash: sha256(value),
        user_id: userId,
        csrf,
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + SESSION_TTL_MS).toISOString(),
      })
      .execute();
    appendCookie(res, `${SESSION_COOKIE}=${value}; ${cookieAttributes(this.secure, SESSION_TTL_MS / 1000)}`);
    const user = await this.db.selectFrom("users").select("username").where("id", "=", userId).executeTakeFirstOrThrow();
    return { userId, username: user.username, csrf };
  }

  /** Signs this browser out. */
  async destroy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const value = readCookie(req, SESSION_COOKIE);
    if (value) await this.db.deleteFrom("web_sessions").where("id_hash", "=", sha256(value)).execute();
    appendCookie(res, `${SESSION_COOKIE}=; ${cookieAttributes(this.secure, 0)}`);
  }

  /** Signs a user out of every browser. */
  async destroyAllFor(userId: number): Promise<void> {
    await this.db.deleteFrom("web_sessions").where("user_id", "=", userId).execute();
  }

  /**
   * The double-submit token for a form shown before sign-in: reuses the browser's, or sets a new
   * one. A cross-site form cannot read the cookie, so it cannot echo it.
   */
  preSessionCsrf(req: IncomingMessage, res: ServerResponse): string {
    const existing = readCookie(req, CSRF_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{32}$/.test(existing)) return existing;
    const token = randomBytes(24).toString("base64url");
    appendCookie(res, `${CSRF_COOKIE}=${token}; ${cookieAttributes(this.secure, 3600)}`);
    return token;
  }

  /** Whether a pre-sign-in form echoed the browser's double-submit token. */
  preSessionCsrfMatches(req: IncomingMessage, submitted: unknown): boolean {
    return typeof submitted === "string" && sameToken(readCookie(req, CSRF_COOKIE), submitted);
  }

  async deleteExpired(): Promise<void> {
    await this.db.deleteFrom("web_sessions").where("expires_at", "<=", new Date().toISOString()).execute();
  }
}
