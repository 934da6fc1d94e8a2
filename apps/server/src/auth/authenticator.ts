import type { IncomingHttpHeaders } from "node:http";
import type { RouteAuth, Scope } from "@tandem/core";
import { forbidden, invalidCredential, missingCredential, tooManyRequests } from "../http/errors";
import type { CredentialVerifier, Principal } from "./principal";
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
  user: ["api_key"],
  device: ["device"],
  any: ["api_key", "device"],
};

/**
 * Decides who a request is and whether it may call a route: the credential must verify, be of a
 * kind the route accepts, carry the route's scope, and be within its rate limit. Fails closed:
 * anything unrecognised is a 401.
 */
export class Authenticator {
  readonly #verifiers: CredentialVerifier[] = [];

  constructor(private readonly rateLimiter: RateLimiter) {}

  addVerifier(verifier: CredentialVerifier): void {
    this.#verifiers.push(verifier);
  }

  /** The principal behind a token, or null; used by sync as well as HTTP. */
  async verify(token: string): Promise<Principal | null> {
    const verifier = this.#verifiers.find((v) => token.startsWith(v.prefix));
    return verifier ? verifier.verify(token) : null;
  }

  async authenticate(headers: IncomingHttpHeaders, auth: Exclude<RouteAuth, "public">, scope: Scope | undefined): Promise<Principal> {
    const token = presentedToken(headers);
    if (token === undefined) throw missingCredential();
    const principal = token === "" ? null : await this.verify(token);
    if (!principal) throw invalidCredential();
    if (!KIND_FOR_AUTH[auth].includes(principal.credential.kind)) {
      throw forbidden("wrong_credential_type", `This route needs a ${auth === "device" ? "device token" : "user API key"}`);
    }
    if (scope && principal.credential.kind === "api_key" && !principal.credential.scopes.has(scope)) {
      throw forbidden("insufficient_scope", `This route needs the scope ${scope}`);
    }
    const retryAfter = this.rateLimiter.take(`${principal.credential.kind}:${principal.credential.id}`);
    if (retryAfter !== null) throw tooManyRequests(retryAfter);
    return principal;
  }
}
