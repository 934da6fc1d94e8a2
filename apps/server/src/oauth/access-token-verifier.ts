import { isScope, type Scope } from "@tandem/core";
import { createLocalJWKSet, decodeJwt, type JWK, type JWTVerifyOptions, jwtVerify } from "jose";
import type { Kysely } from "kysely";
import type { CredentialVerifier, Principal, VerifyOptions } from "../auth/principal";
import type { Schema } from "../db/schema";

/** How often a grant's `last_used_at` is written for a busy token. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Accepts the authorization server's access tokens (JWTs) as user credentials: signature, issuer,
 * expiry and audience (the v1 base, or the MCP resource) are checked by `jose`, and then the grant
 * the token names is looked up, so a connected app revoked, or a refresh token reused, stops its
 * access tokens at once instead of when they expire.
 */
export class OAuthAccessTokenVerifier implements CredentialVerifier {
  /** Every JWT (a base64url JSON header) starts so. */
  readonly prefix = "eyJ";
  readonly #keys: ReturnType<typeof createLocalJWKSet>;
  readonly #lastUsedWritten = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly options: { issuer: string; audiences: readonly string[]; publicKey: JWK },
  ) {
    this.#keys = createLocalJWKSet({ keys: [options.publicKey] });
  }

  async verify(token: string, options: VerifyOptions = {}): Promise<Principal | null> {
    if (token.length > 8192) return null;
    let claims: Record<string, unknown>;
    try {
      const checks: JWTVerifyOptions = {
        issuer: this.options.issuer,
        audience: [...this.options.audiences],
        algorithms: ["ES256"],
        typ: "at+jwt",
        requiredClaims: ["exp", "sub", "client_id", "gid"],
      };
      // Past its expiry: every check made as of the token's last valid second (its grant is looked up below, now).
      const expiry = options.acceptExpired ? decodeJwt(token).exp : undefined;
      if (typeof expiry === "number" && expiry * 1000 < Date.now()) checks.currentDate = new Date((expiry - 1) * 1000);
      ({ payload: claims } = await jwtVerify(token, this.#keys, checks));
    } catch {
      return null;
    }
    const { sub, gid, client_id: clientId, scope, aud } = claims;
    if (typeof sub !== "string" || typeof gid !== "string" || typeof clientId !== "string" || !/^\d{1,15}$/.test(sub)) return null;
    const grant = await this.db
      .selectFrom("oauth_models")
      .innerJoin("users", (join) => join.on("users.id", "=", Number(sub)))
      .select(["oauth_models.account_id", "oauth_models.client_id", "oauth_models.expires_at", "users.username"])
      .where("oauth_models.model", "=", "Grant")
      .where("oauth_models.id", "=", gid)
      .executeTakeFirst();
    if (!grant || grant.account_id !== sub || grant.client_id !== clientId) return null;
    if (grant.expires_at !== null && grant.expires_at <= Date.now()) return null;
    const granted = new Set(typeof scope === "string" ? scope.split(" ").filter(Boolean) : []);
    const scopes = new Set([...granted].filter((s): s is Scope => isScope(s)));
    this.#touch(gid);
    return {
      userId: Number(sub),
      username: grant.username,
      credential: { kind: "oauth", id: gid, clientId, audience: typeof aud === "string" ? aud : null, scopes, grantedScopes: granted },
    };
  }

  #touch(grantId: string): void {
    const now = Date.now();
    if (now - (this.#lastUsedWritten.get(grantId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    if (this.#lastUsedWritten.size > 10_000) this.#lastUsedWritten.clear();
    this.#lastUsedWritten.set(grantId, now);
    void this.db
      .updateTable("oauth_models")
      .set({ last_used_at: now })
      .where("model", "=", "Grant")
      .where("id", "=", grantId)
      .execute()
      .catch(() => {});
  }
}
