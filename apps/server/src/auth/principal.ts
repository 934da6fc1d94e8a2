import type { Scope } from "@tandem/core";

/** A user's API key, limited to its scopes. */
export interface ApiKeyCredential {
  readonly kind: "api_key";
  readonly id: string;
  readonly label: string | null;
  readonly scopes: ReadonlySet<Scope>;
}

/**
 * Whatever authenticated a request. The runtime issue adds the bridge's device token as a
 * second kind; routes say which kinds they accept.
 */
export type Credential = ApiKeyCredential;

export interface Principal {
  readonly userId: number;
  readonly username: string;
  readonly credential: Credential;
}

/**
 * Turns a presented token into a principal. One verifier per token prefix; the authenticator
 * picks by prefix, so adding a credential kind is adding a verifier.
 */
export interface CredentialVerifier {
  readonly prefix: string;
  verify(token: string): Promise<Principal | null>;
}
