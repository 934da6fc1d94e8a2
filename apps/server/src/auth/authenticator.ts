import type { IncomingHttpHeaders } from "node:http";
import { holdsScope, type RouteAuth, type Scope } from "@tandem/core";
import { agentPaused, forbidden, invalidCredential, missingCredential, tooManyRequests } from "../http/errors";
import { agentOf, type CredentialVerifier, type Principal, type VerifyOptions } from "./principal";
import type { RateLimiter } from "./rate-limiter";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The credential a request presents: `Authorization: Bearer …`, or `X-API-Key` as an alias. */
export function presentedToken(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization);
    if (!match) return "";
    // Bridges say `Bearer anonymous` on routes that need no credential.
    return match[1] === "anonymous" ? undefined : match[1];
  }
  const apiKey = headers["x-api-key"];
  return typeof apiKey === "string" ? apiKey.trim() : undefined;
}

const KIND_FOR_AUTH: Record<Exclude<RouteAuth, "public">, readonly Principal["credential"]["kind"][]> = {
  user: ["api_key", "oauth"],
  device: ["device"],
  any: ["api_key", "oauth", "device"],
};

/**
 * Decides who a request is and whether it may call a route: the credential must verify, be of a
 * kind the route accepts, carry the route's scope, and be within its rate limit. Fails closed:
 * anything unrecognised is a 401.
 */
export class Authenticator {
  readonly #verifiers: CredentialVerifier[] = [];

  /**
   * @param rateLimiter requests per credential, once it has verified;
   * @param failureLimiter failed authentications per client address, so guessing keys is slow
   *   and cheap to refuse: only failures take from it, a valid credential never waits on it.
   */
  constructor(
    private readonly rateLimiter: RateLimiter,
    private readonly failureLimiter: RateLimiter,
  ) {}

  addVerifier(verifier: CredentialVerifier): void {
    this.#verifiers.push(verifier);
  }

  /** The principal behind a token, or null; used by sync as well as HTTP. */
  async verify(token: string, options?: VerifyOptions): Promise<Principal | null> {
    const verifier = this.#verifiers.find((v) => token.startsWith(v.prefix));
    const principal = verifier ? await verifier.verify(token, options) : null;
    // A managed agent's key is refused wherever a caller did not say it takes one.
    if (principal && agentOf(principal) && !options?.allowAgent) return null;
    return principal;
  }

  /**
   * @param clientAddress the peer's address, which failed attempts are counted against
   * @param scopes every scope a user key needs for the route
   */
  async authenticate(
    headers: IncomingHttpHeaders,
    clientAddress: string,
    auth: Exclude<RouteAuth, "public">,
    scopes: readonly Scope[],
  ): Promise<Principal> {
    const token = presentedToken(headers);
    if (token === undefined) throw missingCredential();
    const principal = token === "" ? null : await this.verify(token, { allowAgent: true });
    if (!principal) {
      const retryAfter = await this.failureLimiter.take(clientAddress);
      throw retryAfter === null ? invalidCredential() : tooManyRequests(retryAfter);
    }
    if (!KIND_FOR_AUTH[auth].includes(principal.credential.kind)) {
      throw forbidden("wrong_credential_type", `This route needs a ${auth === "device" ? "device token" : "user API key"}`);
    }
    const { credential } = principal;
    const agent = agentOf(principal);
    if (agent) {
      // The agent is its grant: a route that needs no scope (messaging as the owner, the owner's
      // account, MCP, A2A) is the owner's, never the agent's.
      if (scopes.length === 0) throw forbidden("agent_not_allowed", "A managed agent's key cannot call this route");
      if (agent.status === "paused") throw agentPaused(agent.handle);
    }
    const missing = credential.kind !== "device" ? scopes.filter((scope) => !holdsScope(credential.scopes, scope)) : [];
    if (missing.length > 0) {
      throw forbidden("insufficient_scope", `This route needs the scope${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`);
    }
    const retryAfter = await this.rateLimiter.take(`${principal.credential.kind}:${principal.credential.id}`);
    if (retryAfter !== null) throw tooManyRequests(retryAfter);
    return principal;
  }
}
