import type { Scope } from "@tandem/core";
import { ApiError } from "../http/errors";

/** A user's API key, limited to its scopes. */
export interface ApiKeyCredential {
  readonly kind: "api_key";
  readonly id: string;
  readonly label: string | null;
  readonly scopes: ReadonlySet<Scope>;
  /**
   * Set when the key is a managed agent's: the principal is then the agent, not its owner
   * (`userId` is the owner's, whose workspace the agent works in). Its scopes come from the
   * agent's grant, and only routes that take an agent let it through (auth/authenticator.ts).
   */
  readonly agent?: KeyAgent;
}

/** The managed agent behind an agent's key, as it was when the request was authenticated. */
export interface KeyAgent {
  readonly id: number;
  readonly handle: string;
  readonly status: "active" | "paused";
}

/** An OAuth access token (a JWT the authorization server minted), limited to the scopes its grant gave. */
export interface OAuthCredential {
  readonly kind: "oauth";
  /** The grant (connected app) the token belongs to. */
  readonly id: string;
  readonly clientId: string;
  /** The resource the token was minted for (the v1 base or the MCP endpoint); null for a browser session. */
  readonly audience: string | null;
  readonly scopes: ReadonlySet<Scope>;
  /** Every scope the token carries, the OpenID and non-`os.` ones included. */
  readonly grantedScopes: ReadonlySet<string>;
}

/** A bridge's device token: it speaks for one runtime endpoint of its owner, and for nothing else. */
export interface DeviceCredential {
  readonly kind: "device";
  /** The endpoint id (`ep_…`). */
  readonly id: string;
  readonly deviceId: string;
}

/** Whatever authenticated a request; routes say which kinds they accept. */
export type Credential = ApiKeyCredential | OAuthCredential | DeviceCredential;

export interface Principal<C extends Credential = Credential> {
  readonly userId: number;
  readonly username: string;
  readonly credential: C;
}

/** A person: an API key or an OAuth access token, both limited to their scopes. */
export type UserPrincipal = Principal<ApiKeyCredential | OAuthCredential>;
export type DevicePrincipal = Principal<DeviceCredential>;

/**
 * Turns a presented token into a principal. One verifier per token prefix; the authenticator
 * picks by prefix, so adding a credential kind is adding a verifier.
 */
export interface CredentialVerifier {
  readonly prefix: string;
  verify(token: string, options?: VerifyOptions): Promise<Principal | null>;
}

export interface VerifyOptions {
  /**
   * Accept an access token past its expiry (its signature, issuer, audience and grant still
   * checked): an open sync socket is re-checked against what it was opened with, and what ends it
   * is its grant revoked, not the quarter-hour an access token lives.
   */
  readonly acceptExpired?: boolean;
  /**
   * Accept a managed agent's key. Off by default, so every path that reads a credential by itself
   * (sync, the event stream, share links, OAuth pages) refuses an agent: only the route table's
   * routes, which check the agent's scopes, take one.
   */
  readonly allowAgent?: boolean;
}

/** The managed agent a principal is, or undefined for a person (or a device). */
export function agentOf(principal: Principal): KeyAgent | undefined {
  return principal.credential.kind === "api_key" ? principal.credential.agent : undefined;
}

/**
 * Refuses an OAuth token that was not granted `scope`, for the routes the v1 scopes (`os.*`) do not
 * cover but the OAuth scope list does (sending messages as the person: `agent.message:send`). An API
 * key passes: the person made it, and the contract gives these routes to any key.
 */
export function requireOAuthScope(principal: UserPrincipal, scope: string): void {
  const { credential } = principal;
  if (credential.kind === "oauth" && !credential.grantedScopes.has(scope)) {
    throw new ApiError(403, "insufficient_scope", `This app was not allowed ${scope}; sign in to it again and allow it`);
  }
}
