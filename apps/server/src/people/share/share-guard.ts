import type { IncomingMessage } from "node:http";
import { presentedToken } from "../../auth/authenticator";
import type { RateLimiter } from "../../auth/rate-limiter";
import type { AppContext } from "../../context";
import { ApiError, invalidCredential, tooManyRequests } from "../../http/errors";
import { sameToken, WebSessions } from "../../oauth/web-session";
import { findLiveLink, type ShareLinkRow } from "./share-links";

export const linkNotFound = () => new ApiError(404, "share_link_not_found", "This share link is unknown, has expired or was revoked");

export const signInRequired = () =>
  new ApiError(
    401,
    "sign_in_required",
    "This share link needs a signed-in visitor: sign in on its page, or send an API key as 'Authorization: Bearer <key>'",
  );

/**
 * The header the guest page sends with the signed-in browser's cookie: its session's CSRF token,
 * which a page of another site cannot know, so it cannot speak as the visitor.
 */
export const GUEST_CSRF_HEADER = "x-tandem-csrf";

/** A signed-in visitor: the account behind an API key or the browser's session. */
export interface VisitorAccount {
  readonly userId: number;
  readonly username: string;
}

/**
 * Every redemption of a share token (the page, the chat route's meta and messages, a session's
 * continuation, `POST /network/connect`) passes here. Tokens are 10 base62 characters, so
 * guessing is made slow three ways: attempts per client address, attempts on one token from
 * anywhere, and, once an address has named too many tokens that are not live, a pause during
 * which that address gets 429 for every token, live or not, so a hit cannot be told from a miss.
 * The counts are shared by every instance (`context.shared`): guessing through several is no faster.
 */
export class ShareGuard {
  readonly #perAddress: RateLimiter;
  readonly #perToken: RateLimiter;
  /** Dead tokens named per address; past its budget the address waits for every token until its window ends. */
  readonly #failures: RateLimiter;
  readonly #sessions: WebSessions;

  constructor(private readonly app: AppContext) {
    this.#sessions = new WebSessions(app.db, app.config.publicUrl?.startsWith("https:") ?? false);
    const { shareAttemptsPerMinute, shareTokenAttemptsPerMinute, shareFailuresPerMinute } = app.config;
    const { shared } = app;
    this.#perAddress = shared.limiter("share-attempts", { perMinute: shareAttemptsPerMinute, burst: shareAttemptsPerMinute });
    this.#perToken = shared.limiter("share-token-attempts", { perMinute: shareTokenAttemptsPerMinute, burst: shareTokenAttemptsPerMinute });
    this.#failures = shared.limiter("share-failures", { perMinute: shareFailuresPerMinute, burst: shareFailuresPerMinute });
  }

  /** The live link `token` names, or a 404 (or 429, see above). */
  async redeem(token: string, address: string): Promise<ShareLinkRow> {
    const blocked = await this.#failures.exhausted(`f:${address}`);
    if (blocked !== null) throw tooManyRequests(blocked);
    const forAddress = await this.#perAddress.take(`a:${address}`);
    if (forAddress !== null) throw tooManyRequests(forAddress);
    const forToken = await this.#perToken.take(`t:${token.slice(0, 64)}`);
    if (forToken !== null) throw tooManyRequests(forToken);
    const link = await findLiveLink(this.app, token);
    if (link) return link;
    const wait = await this.#failures.take(`f:${address}`);
    if (wait !== null) throw tooManyRequests(wait);
    throw linkNotFound();
  }

  /**
   * The visitor's account: the request's user API key, or, on a link that requires sign-in, the
   * browser's session (the guest page sends its CSRF token with it; see GUEST_CSRF_HEADER). A link
   * that requires sign-in without either is a 401; a credential that does not verify is a 401 on
   * any link (a client that sent one meant to be signed in).
   */
  async visitorAccount(link: ShareLinkRow, req: IncomingMessage): Promise<VisitorAccount | null> {
    const token = presentedToken(req.headers);
    if (token !== undefined) {
      const principal = token === "" ? null : await this.app.authenticator.verify(token);
      if (principal?.credential.kind !== "api_key") throw invalidCredential();
      return principal;
    }
    if (link.require_sign_in !== 1) return null;
    const session = await this.signedInBrowser(req);
    const csrf = req.headers[GUEST_CSRF_HEADER];
    if (!session || !sameToken(session.csrf, typeof csrf === "string" ? csrf : undefined)) throw signInRequired();
    return session;
  }

  /** The person signed in to this server in the requesting browser (the sign-in page's session), if any. */
  signedInBrowser(req: IncomingMessage) {
    return this.#sessions.find(req);
  }
}
