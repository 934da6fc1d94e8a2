import { isIP } from "node:net";
import { API_BASE_PATH } from "@tandem/core";
import express, { type Request, type Response } from "express";
import type Provider from "oidc-provider";
import { MCP_PATH } from "../agent/mcp-server/mcp-route";
import { passwordProblem, setPassword, verifyPassword } from "../auth/passwords";
import type { UserPrincipal } from "../auth/principal";
import type { RateLimiter } from "../auth/rate-limiter";
import { addressKey, SignInLimits } from "../auth/sign-in-limits";
import { nowIso } from "../clock";
import type { AppContext } from "../context";
import { SESSION_DECISION_PATH } from "../delegation/runtime/pairing-page";
import { decidePairing } from "../delegation/runtime/pairing-service";
import { ApiError } from "../http/errors";
import { createUser } from "../people/users/users-service";
import { announceAccessChange } from "../shared/access-changes";
import { bumpAccessEpoch } from "../sync/access-epoch";
import { OAuthAccessTokenVerifier } from "./access-token-verifier";
import { listConnectedApps, revokeConnectedApp } from "./connected-apps";
import { OAUTH_MOUNT_PATH, resourcesOf } from "./oauth-paths";
import { OPENID_SCOPES, RESOURCE_SCOPES } from "./oauth-scopes";
import { accountPage, consentPage, firstRunPage, messagePage, type Page, signInPage } from "./pages";
import { loadProviderKeys, type ProviderKeys, publicJwk } from "./provider-keys";
import { deleteExpiredOAuthRows } from "./storage-adapter";
import { sameToken, WebSessions } from "./web-session";

/** Client registrations per address: MCP clients register once per install. */
const REGISTRATIONS_PER_ADDRESS = { perMinute: 6, burst: 20 };

const FORM = express.urlencoded({ extended: false, limit: "16kb", parameterLimit: 20 });

function send(res: Response, page: Page): void {
  res.status(page.status).set(page.headers).send(page.html);
}

function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value : "";
}

/** A path on this server to return to after signing in; anything else (another origin, `//host`) is refused. */
function safeNext(next: string): string {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) && next.length <= 1000 ? next : "/";
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * Whether a request comes from the machine the server runs on: the peer is a loopback address
 * (never a forwarded header) and the browser addressed the server by a loopback name, so a
 * reverse proxy on the same machine, or a DNS rebinding page, does not count.
 */
export function fromThisMachine(req: Request): boolean {
  const peer = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
  const loopbackPeer = peer === "::1" || (isIP(peer) === 4 && peer.startsWith("127."));
  const host = (req.headers.host ?? "").toLowerCase().replace(/:\d+$/, "");
  return loopbackPeer && LOOPBACK_HOSTS.has(host);
}

/**
 * The authorization server and the pages a person signs in on. The provider needs the issuer,
 * which is known only once the server listens (unless `publicUrl` is set): `start` builds it
 * then, before the first request can arrive.
 */
export class OAuthServer {
  readonly sessions: WebSessions;
  /**
   * The provider (oidc-provider, its request handler made once: Koa composes its middleware per
   * callback), made by the first request that needs it, not at start: most servers see none.
   */
  #provider: Promise<{ provider: Provider; callback: (req: Request, res: Response) => void }> | undefined;
  #issuer = "";
  /** Failed sign-ins, counted in the database (per account and address, per address, per account). */
  readonly #signInLimits: SignInLimits;
  readonly #registrations: RateLimiter;

  private constructor(
    private readonly context: AppContext,
    private readonly keys: ProviderKeys,
  ) {
    this.sessions = new WebSessions(context.db, context.config.publicUrl?.startsWith("https:") ?? false);
    this.#signInLimits = new SignInLimits(context.db, context.clock, context.config);
    this.#registrations = context.shared.limiter("oauth-registrations", REGISTRATIONS_PER_ADDRESS);
    context.maintenance.add("oauth.cleanup", async () => {
      await deleteExpiredOAuthRows(context.db);
      await this.sessions.deleteExpired();
      await this.#signInLimits.deleteExpired();
    });
  }

  static async create(context: AppContext): Promise<OAuthServer> {
    return new OAuthServer(context, await loadProviderKeys(context.db, context.secrets));
  }

  /**
   * The issuer: the configured public URL, else the address the server listens at. Behind a
   * reverse proxy, set the public URL: tokens name their issuer, and clients check it.
   */
  static issuerFor(publicUrl: string | undefined, listeningUrl: string): string {
    return (publicUrl ?? listeningUrl).replace(/\/+$/, "");
  }

  start(listeningUrl: string): void {
    this.#issuer = OAuthServer.issuerFor(this.context.config.publicUrl, listeningUrl);
    const { api, mcp } = resourcesOf(this.#issuer);
    this.context.authenticator.addVerifier(
      new OAuthAccessTokenVerifier(this.context.db, {
        issuer: this.#issuer,
        audiences: [api, mcp],
        publicKey: publicJwk(this.keys.signingKey),
      }),
    );
  }

  #loadProvider() {
    if (!this.#issuer) throw new Error("the OAuth server has not started");
    this.#provider ??= import("./oauth-provider").then(({ createOAuthProvider }) => {
      const provider = createOAuthProvider({
        issuer: this.#issuer,
        db: this.context.db,
        keys: this.keys,
        sessions: this.sessions,
        logger: this.context.logger,
        secure: this.#issuer.startsWith("https:"),
      });
      // Grants the provider revokes itself are only ever revoked through it, so after it loaded.
      provider.on("grant.revoked", () => void this.#grantRevoked());
      return { provider, callback: provider.callback() as unknown as (req: Request, res: Response) => void };
    });
    return this.#provider;
  }

  /**
   * The provider revoked a grant itself (its refresh token revoked at the revocation endpoint, or
   * reused): its access tokens already fail, and the sync sockets they opened close, here at once,
   * on the other instances at the signal (or their next look at the access epoch).
   */
  async #grantRevoked(): Promise<void> {
    try {
      await bumpAccessEpoch(this.context.db);
      await this.context.sync.connections.recheck();
      announceAccessChange(this.context.shared);
    } catch (error) {
      this.context.logger.warn({ err: error }, "could not re-check sync access after a revoked grant");
    }
  }

  #handle(req: Request, res: Response, next: express.NextFunction): void {
    this.#loadProvider().then(({ callback }) => callback(req, res), next);
  }

  get issuer(): string {
    return this.#issuer;
  }

  /** The provider, loaded on first use. */
  async provider(): Promise<Provider> {
    return (await this.#loadProvider()).provider;
  }

  /** Everything at the site root: metadata, sign-in pages, first run, and the provider under /oauth. */
  routes(homePage: (req: Request, res: Response) => void): express.Router {
    const router = express.Router();
    const wrap = (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: express.NextFunction) => {
      handler(req, res).catch(next);
    };

    // RFC 8414 metadata at the origin (the provider serves it as OpenID discovery under its mount).
    const discovery = (req: Request, res: Response, next: express.NextFunction) => {
      req.url = "/.well-known/openid-configuration";
      req.originalUrl = `${OAUTH_MOUNT_PATH}/.well-known/openid-configuration`;
      this.#handle(req, res, next);
    };
    router.get("/.well-known/oauth-authorization-server", discovery);
    router.get("/.well-known/openid-configuration", discovery);
    // RFC 9728 metadata for the v1 API (the MCP endpoint publishes its own at …/mcp).
    const protectedResource = (_req: Request, res: Response) => {
      // Public metadata: browser-based clients (MCP inspectors) read it from other origins.
      res.set({ "cache-control": "public, max-age=300", "access-control-allow-origin": "*" }).json({
        resource: resourcesOf(this.#issuer).api,
        authorization_servers: [this.#issuer],
        scopes_supported: [...RESOURCE_SCOPES],
        bearer_methods_supported: ["header"],
        resource_name: "Tandem v1 API",
      });
    };
    router.get("/.well-known/oauth-protected-resource", protectedResource);
    router.get(`/.well-known/oauth-protected-resource${API_BASE_PATH}`, protectedResource);

    // userinfo: access tokens are JWTs for the v1 resource, which the provider's own userinfo refuses.
    const userinfo = wrap(async (req, res) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "");
      const principal = match?.[1] ? await this.context.authenticator.verify(match[1]) : null;
      if (principal?.credential.kind !== "oauth" || !principal.credential.grantedScopes.has("openid")) {
        res
          .status(401)
          .set("www-authenticate", 'Bearer error="invalid_token"')
          .json({ error: "invalid_token", error_description: "invalid access token" });
        return;
      }
      const granted = principal.credential.grantedScopes;
      const user = await this.context.db
        .selectFrom("users")
        .select(["username", "name", "email"])
        .where("id", "=", principal.userId)
        .executeTakeFirstOrThrow();
      res.set("cache-control", "no-store").json({
        sub: String(principal.userId),
        ...(granted.has("profile") ? { name: user.name ?? user.username, preferred_username: user.username, username: user.username } : {}),
        ...(granted.has("email") && user.email ? { email: user.email } : {}),
      });
    });
    router.get(`${OAUTH_MOUNT_PATH}/me`, userinfo);
    router.post(`${OAUTH_MOUNT_PATH}/me`, userinfo);

    router.post(`${OAUTH_MOUNT_PATH}/reg`, async (req, res, next) => {
      let retryAfter: number | null;
      try {
        retryAfter = await this.#registrations.take(`reg:${req.socket.remoteAddress}`);
      } catch (error) {
        return next(error);
      }
      if (retryAfter === null) return next();
      res
        .status(429)
        .set("retry-after", String(retryAfter))
        .json({ error: "rate_limited", error_description: "too many client registrations; try again later" });
    });

    router.get(
      `${OAUTH_MOUNT_PATH}/interaction/:uid`,
      wrap((req, res) => this.#showInteraction(req, res)),
    );
    router.post(
      `${OAUTH_MOUNT_PATH}/interaction/:uid/login`,
      FORM,
      wrap((req, res) => this.#interactionLogin(req, res)),
    );
    router.post(
      `${OAUTH_MOUNT_PATH}/interaction/:uid/consent`,
      FORM,
      wrap((req, res) => this.#interactionConsent(req, res)),
    );

    router.get("/signin", (req, res) => {
      const next = safeNext(typeof req.query.next === "string" ? req.query.next : "/");
      send(res, signInPage({ action: "/signin", csrf: this.sessions.preSessionCsrf(req, res), next }));
    });
    router.post(
      "/signin",
      FORM,
      wrap(async (req, res) => {
        const next = safeNext(field(req, "next") || "/");
        const userId = await this.#checkSignIn(req, res, (error, status) =>
          send(res, signInPage({ action: "/signin", csrf: this.sessions.preSessionCsrf(req, res), next, error, status })),
        );
        if (userId === null) return;
        await this.sessions.create(res, userId);
        res.redirect(303, next);
      }),
    );
    router.post(
      "/signout",
      FORM,
      wrap(async (req, res) => {
        const session = await this.sessions.find(req);
        if (session && !this.#csrfOk(session.csrf, field(req, "csrf")))
          return send(res, messagePage(403, "Sign out", "The form expired; reload the page."));
        await this.sessions.destroy(req, res);
        send(res, messagePage(200, "Signed out", "You are signed out of Tandem in this browser."));
      }),
    );

    // The signed-in person's page: connected apps (with Disconnect) and Sign out.
    const account = async (req: Request, res: Response, notice?: string) => {
      const session = await this.sessions.find(req);
      if (!session) return void res.redirect(303, "/signin?next=%2Faccount");
      const apps = await listConnectedApps(this.context.db, session.userId);
      send(res, accountPage({ username: session.username, csrf: session.csrf, apps, notice }));
    };
    router.get(
      "/account",
      wrap((req, res) => account(req, res)),
    );
    router.post(
      "/account/apps/disconnect",
      FORM,
      wrap(async (req, res) => {
        const principal = await this.sessionPrincipal(req, field(req, "csrf"));
        if (!principal) return send(res, messagePage(403, "Not signed in", "Sign in again, then reload the page."));
        const revoked = await revokeConnectedApp(this.context.db, principal.userId, field(req, "clientId").slice(0, 200));
        await account(req, res, revoked ? "Disconnected: the app's access ended." : "That app was not connected.");
      }),
    );

    // First run: the root page offers to create the first account, once, to the machine itself.
    router.get(
      "/",
      wrap(async (req, res) => {
        if ((await this.#firstRunOpen()) && fromThisMachine(req)) {
          return send(res, firstRunPage({ action: "/setup", csrf: this.sessions.preSessionCsrf(req, res) }));
        }
        homePage(req, res);
      }),
    );
    router.post(
      "/setup",
      FORM,
      wrap((req, res) => this.#firstRun(req, res)),
    );

    // The device-code approval page's decision, from a signed-in browser (the API-key way is the v1 route).
    router.post(
      SESSION_DECISION_PATH,
      FORM,
      wrap(async (req, res) => {
        const principal = await this.sessionPrincipal(req, field(req, "csrf"));
        if (!principal) return send(res, messagePage(403, "Not signed in", "Sign in again, then reload the pairing page."));
        const action = field(req, "action");
        if (action !== "approve" && action !== "deny") return send(res, messagePage(400, "Pair a device", "Choose Approve or Deny."));
        try {
          const decided = await decidePairing(this.context, principal, field(req, "userCode").slice(0, 64), action);
          send(
            res,
            messagePage(
              200,
              "Pair a device",
              decided.status === "approved"
                ? "Approved. The device finishes pairing within a few seconds."
                : "Denied. The device will not be paired.",
            ),
          );
        } catch (error) {
          if (error instanceof ApiError) return send(res, messagePage(error.status, "Pair a device", error.message));
          throw error;
        }
      }),
    );

    router.use(OAUTH_MOUNT_PATH, (req, res, next) => this.#handle(req, res, next));
    return router;
  }

  #csrfOk(expected: string, submitted: string): boolean {
    return sameToken(expected, submitted);
  }

  async #firstRunOpen(): Promise<boolean> {
    const anyUser = await this.context.db.selectFrom("users").select("id").limit(1).executeTakeFirst();
    if (anyUser) return false;
    const latch = await this.context.db.selectFrom("oauth_secrets").select("name").where("name", "=", "first-run").executeTakeFirst();
    return !latch;
  }

  async #firstRun(req: Request, res: Response): Promise<void> {
    const again = (error: string, status: number) =>
      send(res, firstRunPage({ action: "/setup", csrf: this.sessions.preSessionCsrf(req, res), error, status }));
    if (!fromThisMachine(req))
      return send(res, messagePage(403, "Not allowed", "The first account can only be created from the machine the server runs on."));
    if (!(await this.#firstRunOpen()))
      return send(res, messagePage(409, "Already set up", "This server already has an account. Sign in instead."));
    if (!this.sessions.preSessionCsrfMatches(req, field(req, "csrf"))) return again("The form expired; try again.", 403);
    const password = field(req, "password");
    const problem = passwordProblem(password);
    if (problem) return again(`The password ${problem}.`, 400);
    // The latch makes "once" hold even when two requests race: only one insert wins.
    const { db } = this.context;
    const won = await db
      .insertInto("oauth_secrets")
      .values({ name: "first-run", sealed: "", created_at: nowIso() })
      .onConflict((oc) => oc.column("name").doNothing())
      .returning("name")
      .executeTakeFirst();
    if (!won) return send(res, messagePage(409, "Already set up", "This server already has an account. Sign in instead."));
    let userId: number;
    try {
      const user = await createUser(db, { username: field(req, "username"), name: field(req, "name").trim() || null });
      userId = user.id;
      await setPassword(db, user.id, password);
    } catch (error) {
      await db.deleteFrom("oauth_secrets").where("name", "=", "first-run").execute();
      if (error instanceof ApiError) return again(error.message, error.status);
      throw error;
    }
    await this.sessions.create(res, userId);
    send(
      res,
      messagePage(
        201,
        "Account created",
        "Your account is ready and this browser is signed in. Create API keys with `tandem-server keys create`, or connect apps, which will ask you here.",
      ),
    );
  }

  /** Checks a sign-in form: CSRF, rate limits, password. Answers the user id, or null having answered the request. */
  async #checkSignIn(req: Request, res: Response, fail: (error: string, status: number) => void): Promise<number | null> {
    if (!this.sessions.preSessionCsrfMatches(req, field(req, "csrf"))) {
      fail("The form expired; try again.", 403);
      return null;
    }
    const username = field(req, "username").trim().toLowerCase().slice(0, 64);
    const user = await this.context.db
      .selectFrom("users")
      .select(["id", "password_hash"])
      .where("username", "=", username)
      .executeTakeFirst();
    const attempt = { username, userId: user?.id, address: addressKey(req.socket.remoteAddress) };
    const retryAfter = await this.#signInLimits.admit(attempt);
    if (retryAfter !== null) {
      res.set("retry-after", String(retryAfter));
      fail(`Too many sign-in attempts. Try again in ${retryAfter} seconds.`, 429);
      return null;
    }
    const ok = await verifyPassword(field(req, "password"), user?.password_hash ?? null);
    if (!user || !ok) {
      await this.#signInLimits.failed(attempt);
      fail("Wrong username or password.", 401);
      return null;
    }
    await this.#signInLimits.succeeded({ ...attempt, userId: user.id });
    return user.id;
  }

  async #details(req: Request, res: Response) {
    try {
      return await (await this.provider()).interactionDetails(req, res);
    } catch {
      send(res, messagePage(400, "Sign-in expired", "This sign-in request is unknown or has expired. Start again from the app."));
      return null;
    }
  }

  async #clientOf(clientId: unknown): Promise<{ name: string; redirectUri?: string }> {
    const client = typeof clientId === "string" ? await (await this.provider()).Client.find(clientId) : undefined;
    return { name: client?.clientName ?? (typeof clientId === "string" ? clientId : "An app") };
  }

  async #showInteraction(req: Request, res: Response): Promise<void> {
    const details = await this.#details(req, res);
    if (!details) return;
    const { uid, prompt, params } = details;
    const client = await this.#clientOf(params.client_id);
    const redirectUri = typeof params.redirect_uri === "string" ? params.redirect_uri : undefined;
    const web = await this.sessions.find(req);
    const signedInAs = web && (prompt.name === "login" || details.session?.accountId === String(web.userId)) ? web : null;
    if (prompt.name === "login" && signedInAs) {
      await (await this.provider()).interactionFinished(
        req,
        res,
        { login: { accountId: String(signedInAs.userId) } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (prompt.name === "consent" && signedInAs) {
      const requested = typeof params.scope === "string" ? params.scope.split(" ").filter(Boolean) : [];
      const resource = params.resource;
      return send(
        res,
        consentPage({
          action: `${OAUTH_MOUNT_PATH}/interaction/${uid}/consent`,
          csrf: signedInAs.csrf,
          username: signedInAs.username,
          clientName: client.name,
          clientId: String(params.client_id),
          redirectUri: redirectUri ?? "",
          scopes: requested,
          resources: Array.isArray(resource)
            ? resource.map(String)
            : typeof resource === "string"
              ? [resource]
              : [resourcesOf(this.#issuer).api],
        }),
      );
    }
    send(
      res,
      signInPage({
        action: `${OAUTH_MOUNT_PATH}/interaction/${uid}/login`,
        csrf: this.sessions.preSessionCsrf(req, res),
        clientName: client.name,
        redirectUri,
      }),
    );
  }

  async #interactionLogin(req: Request, res: Response): Promise<void> {
    const details = await this.#details(req, res);
    if (!details) return;
    const client = await this.#clientOf(details.params.client_id);
    const redirectUri = typeof details.params.redirect_uri === "string" ? details.params.redirect_uri : undefined;
    const action = `${OAUTH_MOUNT_PATH}/interaction/${details.uid}/login`;
    const userId = await this.#checkSignIn(req, res, (error, status) =>
      send(res, signInPage({ action, csrf: this.sessions.preSessionCsrf(req, res), clientName: client.name, redirectUri, error, status })),
    );
    if (userId === null) return;
    await this.sessions.create(res, userId);
    await (await this.provider()).interactionFinished(
      req,
      res,
      { login: { accountId: String(userId) } },
      { mergeWithLastSubmission: false },
    );
  }

  async #interactionConsent(req: Request, res: Response): Promise<void> {
    const details = await this.#details(req, res);
    if (!details) return;
    const web = await this.sessions.find(req);
    const accountId = details.session?.accountId;
    if (!web || accountId !== String(web.userId) || details.prompt.name !== "consent") {
      return send(res, messagePage(403, "Not signed in", "Sign in again from the app to continue."));
    }
    if (!this.#csrfOk(web.csrf, field(req, "csrf")))
      return send(res, messagePage(403, "Form expired", "The form expired; start again from the app."));
    if (field(req, "decision") !== "allow") {
      await (await this.provider()).interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "The user denied access" },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const { Grant } = await this.provider();
    const promptDetails = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const grant = details.grantId
      ? ((await Grant.find(details.grantId)) ?? new Grant({ accountId, clientId: String(details.params.client_id) }))
      : new Grant({ accountId, clientId: String(details.params.client_id) });
    if (promptDetails.missingOIDCScope) grant.addOIDCScope(promptDetails.missingOIDCScope.join(" "));
    if (promptDetails.missingOIDCClaims) grant.addOIDCClaims(promptDetails.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(promptDetails.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(" "));
    }
    const grantId = await grant.save();
    await (await this.provider()).interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  /** The principal a signed-in browser acts as on the server's own pages (device approval). */
  async sessionPrincipal(req: Request, submittedCsrf: string): Promise<UserPrincipal | null> {
    const web = await this.sessions.find(req);
    if (!web || !this.#csrfOk(web.csrf, submittedCsrf)) return null;
    return {
      userId: web.userId,
      username: web.username,
      // Not a token: the person themself, on this server's own page. Audit records it as `oauth:browser-session`.
      credential: {
        kind: "oauth",
        id: "browser-session",
        clientId: "tandem-web",
        audience: null,
        scopes: new Set(),
        grantedScopes: new Set(),
      },
    };
  }
}

export { MCP_PATH, OPENID_SCOPES };
