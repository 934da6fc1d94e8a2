// The SDK's OAuth client (discovery from the server's 401, dynamic client registration, PKCE,
// `resource`, refresh) works through an OAuthClientProvider: this one keeps what it is given in the
// server's row, sealed. It runs in one of two modes: `interactive` for POST .../authorize and the
// callback (a redirect is what the user asked for: the URL is captured and a state stored), and
// `background` for tool calls and refreshes (a redirect means the stored authorization no longer
// works: nothing is started, the caller marks the server).

import { randomBytes } from "node:crypto";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { AppContext } from "../../../context";
import { hashState, openSealed, SEALED, sealedFor, serverById, updateServer } from "./mcp-store";

/** How long an authorization the user started may take to come back. */
export const STATE_TTL_MS = 10 * 60_000;

export class StoredOAuthProvider implements OAuthClientProvider {
  /** The authorization URL the SDK built (interactive mode). */
  authorizationUrl: URL | undefined;
  /** The state handed out with it (interactive mode; only its hash is stored). */
  issuedState: string | undefined;
  /** Set when the SDK wanted a new authorization in background mode. */
  needsAuthorization = false;
  /** Called once new tokens are stored (a refresh's turn ends then: see single-flight-refresh.ts). */
  onTokensSaved?: () => void;
  /**
   * Only an authorization the user started registers a client: in the background, a server
   * without a registration needs the user, and must not be sent a registration per tool call.
   */
  readonly saveClientInformation?: (info: OAuthClientInformationMixed) => Promise<void>;

  constructor(
    private readonly app: AppContext,
    private readonly serverId: string,
    /** Our callback route's URL (interactive); undefined in the background, where no redirect happens. */
    private readonly callbackUrl: string | undefined,
    private readonly mode: "interactive" | "background",
    private readonly scope?: string,
  ) {
    if (mode === "interactive") {
      this.saveClientInformation = async (info) => {
        await this.save({ oauth_client: this.seal(info, SEALED.client) });
      };
    }
  }

  /** In the background the SDK needs some redirect URL to stay in the authorization-code flow; none is used. */
  get redirectUrl(): string {
    return this.callbackUrl ?? "urn:tandem:no-redirect";
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Tandem",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      // A public client: PKCE protects the code, and no secret is needed to refresh.
      token_endpoint_auth_method: "none",
      ...(this.scope ? { scope: this.scope } : {}),
    };
  }

  /** The sealed tokens as this provider last read them, so it only ever drops those (see invalidateCredentials). */
  private tokensRead: string | null = null;
  /** The sealed tokens as this provider first read them: what its call started with (see single-flight-refresh.ts). */
  firstTokensSeen: string | null | undefined;

  private async open<T>(
    column: "oauth_client" | "oauth_tokens" | "oauth_verifier",
    purpose: (typeof SEALED)[keyof typeof SEALED],
  ): Promise<T | undefined> {
    const row = await serverById(this.app.db, this.serverId);
    const sealed = row?.[column];
    if (column === "oauth_tokens") {
      this.tokensRead = sealed ?? null;
      if (this.firstTokensSeen === undefined) this.firstTokensSeen = this.tokensRead;
    }
    // Sealed with another key (TANDEM_SECRET_KEY changed) or altered: as good as absent.
    return openSealed<T>(this.app.secrets, sealed, purpose, this.serverId);
  }

  private seal(value: unknown, purpose: (typeof SEALED)[keyof typeof SEALED]): string {
    return this.app.secrets.seal(JSON.stringify(value), sealedFor(purpose, this.serverId));
  }

  private save(change: Parameters<typeof updateServer>[2]) {
    return updateServer(this.app.db, this.serverId, change, this.app.clock.now());
  }

  async state(): Promise<string> {
    const state = randomBytes(24).toString("base64url");
    if (this.mode === "interactive") {
      this.issuedState = state;
      const expires = new Date(this.app.clock.nowMs() + STATE_TTL_MS).toISOString();
      await this.save({ oauth_state_hash: hashState(state), oauth_state_expires_at: expires });
    }
    return state;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const info = await this.open<OAuthClientInformationMixed & { redirect_uris?: string[] }>("oauth_client", SEALED.client);
    // Registered for another callback address (the public URL changed): register again.
    if (this.callbackUrl && info?.redirect_uris && !info.redirect_uris.includes(this.callbackUrl)) return undefined;
    return info;
  }

  tokens(): Promise<OAuthTokens | undefined> {
    // The user asked to authorize: start afresh rather than refresh what is stored.
    if (this.mode === "interactive") return Promise.resolve(undefined);
    return this.open<OAuthTokens>("oauth_tokens", SEALED.tokens);
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.save({ oauth_tokens: this.seal(tokens, SEALED.tokens) });
    this.onTokensSaved?.();
  }

  redirectToAuthorization(url: URL): void {
    if (this.mode === "interactive") this.authorizationUrl = url;
    else this.needsAuthorization = true;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (this.mode === "interactive") await this.save({ oauth_verifier: this.seal(codeVerifier, SEALED.verifier) });
  }

  async codeVerifier(): Promise<string> {
    const verifier = await this.open<string>("oauth_verifier", SEALED.verifier);
    if (!verifier) throw new Error("no authorization is pending for this tool server");
    return verifier;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    if (scope === "discovery") return;
    if (scope === "tokens") {
      // Two calls may find the access token expired at once; the refresh token rotates, so the
      // slower one's refresh fails. The tokens it would drop are then already replaced by the
      // other's: only the tokens this provider read are dropped, never newer ones.
      if (this.tokensRead === null) return;
      await this.app.db
        .updateTable("mcp_servers")
        .set({ oauth_tokens: null, updated_at: this.app.clock.now().toISOString() })
        .where("id", "=", this.serverId)
        .where("oauth_tokens", "=", this.tokensRead)
        .execute();
      return;
    }
    await this.save({
      ...(scope === "all" || scope === "client" ? { oauth_client: null } : {}),
      ...(scope === "all" ? { oauth_tokens: null } : {}),
      ...(scope === "all" || scope === "verifier" ? { oauth_verifier: null } : {}),
    });
  }
}
