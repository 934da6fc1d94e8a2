import type { Kysely } from "kysely";
import Provider, { type Configuration, errors, interactionPolicy, type KoaContextWithOIDC } from "oidc-provider";
import { MCP_PATH } from "../agent/mcp-server/mcp-route";
import type { Schema } from "../db/schema";
import type { Logger } from "../logger";
import { OAUTH_MOUNT_PATH, resourcesOf } from "./oauth-paths";
import { OPENID_SCOPES, RESOURCE_SCOPES } from "./oauth-scopes";
import { messagePage } from "./pages";
import type { ProviderKeys } from "./provider-keys";
import { KyselyOAuthAdapter } from "./storage-adapter";
import type { WebSessions } from "./web-session";

export { MCP_PATH, OPENID_SCOPES, RESOURCE_SCOPES };

/** Tandem's MCP endpoint, a second resource tokens may be minted for. */

export const ACCESS_TOKEN_TTL_S = 15 * 60;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60;
export const GRANT_TTL_S = 365 * 24 * 60 * 60;

export interface OAuthProviderOptions {
  readonly issuer: string;
  readonly db: Kysely<Schema>;
  readonly keys: ProviderKeys;
  readonly sessions: WebSessions;
  readonly logger: Logger;
  /** Whether cookies must be Secure (the issuer is https). */
  readonly secure: boolean;
}

/**
 * The login prompt also asks whenever the browser has no Tandem session for the account the
 * provider's own session names: signing out of Tandem signs out of the authorization server too.
 */
function loginPolicy(sessions: WebSessions) {
  const policy = interactionPolicy.base();
  const login = policy.get("login");
  login?.checks.add(
    new interactionPolicy.Check("tandem_session", "the browser is not signed in to Tandem", async (ctx: KoaContextWithOIDC) => {
      const web = await sessions.find(ctx.req);
      const accountId = ctx.oidc.session?.accountId;
      return web === null || accountId === undefined || String(web.userId) !== accountId
        ? interactionPolicy.Check.REQUEST_PROMPT
        : interactionPolicy.Check.NO_NEED_TO_PROMPT;
    }),
  );
  return policy;
}

export function createOAuthProvider(options: OAuthProviderOptions): Provider {
  const { issuer, db, keys, sessions } = options;
  const resources = resourcesOf(issuer);
  const allowedResources = new Set([resources.api, resources.mcp]);
  const configuration: Configuration = {
    adapter: (name: string) => new KyselyOAuthAdapter(db, name),
    clients: [],
    jwks: { keys: [keys.signingKey as never] },
    cookies: {
      keys: keys.cookieKeys,
      long: { httpOnly: true, sameSite: "lax", secure: options.secure, signed: true },
      short: { httpOnly: true, sameSite: "lax", secure: options.secure, signed: true },
    },
    async findAccount(_ctx, id) {
      if (!/^\d{1,15}$/.test(id)) return undefined;
      const user = await db.selectFrom("users").select(["id", "username", "name", "email"]).where("id", "=", Number(id)).executeTakeFirst();
      if (!user) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          name: user.name ?? user.username,
          email: user.email ?? undefined,
          preferred_username: user.username,
          username: user.username,
        }),
      };
    },
    claims: { openid: ["sub"], profile: ["name", "preferred_username", "username"], email: ["email"] },
    scopes: [...OPENID_SCOPES, ...RESOURCE_SCOPES],
    responseTypes: ["code"],
    pkce: { required: () => true },
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "ES256",
    },
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 15 * 60,
      Session: 14 * 24 * 60 * 60,
      // A connection lasts while its app keeps refreshing (each rotation starts a new 30 days), up to a year.
      Grant: GRANT_TTL_S,
      RefreshToken: REFRESH_TOKEN_TTL_S,
    },
    // Refresh tokens last 30 days however the grant was made, not only as long as the browser session.
    expiresWithSession: async () => false,
    // Every client registered for the refresh grant gets a refresh token: OAuth 2.1 and MCP clients ask
    // for `offline_access` without `prompt=consent`, which OpenID's rule would silently drop.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    // The grant id travels in every access token: the bearer check looks the grant up on each request, so revoking it works at once.
    extraTokenClaims: async (_ctx, token) => ({ gid: (token as { grantId?: string }).grantId }),
    clientBasedCORS: (_ctx, origin, client) =>
      origin !== "null" && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    interactions: {
      url: (_ctx, interaction) => `${OAUTH_MOUNT_PATH}/interaction/${interaction.uid}`,
      policy: loginPolicy(sessions),
    },
    features: {
      devInteractions: { enabled: false },
      // Dynamic client registration (RFC 7591), open as MCP clients expect; rate limited in front of the provider.
      registration: { enabled: true, initialAccessToken: false },
      revocation: { enabled: true },
      // Served by our own handler in front of the provider: access tokens are JWTs for the v1 resource.
      userinfo: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resources.api,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resourceIndicator) => {
          if (!allowedResources.has(resourceIndicator)) throw new errors.InvalidTarget();
          return {
            scope: [...OPENID_SCOPES, ...RESOURCE_SCOPES].join(" "),
            audience: resourceIndicator,
            accessTokenTTL: ACCESS_TOKEN_TTL_S,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "ES256" } },
          };
        },
      },
    },
    enabledJWA: { idTokenSigningAlgValues: ["ES256"] },
    async renderError(ctx, out) {
      const page = messagePage(400, "Sign-in failed", `${out.error}: ${out.error_description ?? "the request was refused"}`);
      ctx.status = Math.max(ctx.status, 400);
      ctx.set(page.headers);
      ctx.body = page.html;
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.proxy = false;
  provider.on("server_error", (_ctx, error) => options.logger.error({ err: error }, "oauth provider error"));
  return provider;
}
