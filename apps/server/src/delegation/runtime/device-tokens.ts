import type { Kysely } from "kysely";
import type { CredentialVerifier, Principal } from "../../auth/principal";
import { type IssuedToken, issueToken, parseToken, secretMatches } from "../../auth/secret-token";
import type { Schema } from "../../db/schema";

export const DEVICE_TOKEN_PREFIX = "svc_dev_";

/** A fresh device token; store `id` and `secretHash` on the endpoint, hand `token` out once. */
export function issueDeviceToken(): IssuedToken {
  return issueToken(DEVICE_TOKEN_PREFIX);
}

/**
 * Device tokens (`svc_dev_…`) speak for one runtime endpoint. A revoked endpoint's token, or a
 * token replaced by re-registration, no longer verifies: the row holds only the current hash.
 */
export class DeviceTokenVerifier implements CredentialVerifier {
  readonly prefix = DEVICE_TOKEN_PREFIX;

  constructor(private readonly db: Kysely<Schema>) {}

  async verify(token: string): Promise<Principal | null> {
    const parsed = parseToken(DEVICE_TOKEN_PREFIX, token);
    if (!parsed) return null;
    const row = await this.db
      .selectFrom("runtime_endpoints")
      .innerJoin("users", "users.id", "runtime_endpoints.owner_id")
      .select([
        "runtime_endpoints.id",
        "runtime_endpoints.device_id",
        "runtime_endpoints.token_hash",
        "users.id as user_id",
        "users.username",
      ])
      .where("runtime_endpoints.token_id", "=", parsed.id)
      .where("runtime_endpoints.revoked_at", "is", null)
      .executeTakeFirst();
    if (!row || !secretMatches(parsed.secret, row.token_hash)) return null;
    return { userId: row.user_id, username: row.username, credential: { kind: "device", id: row.id, deviceId: row.device_id } };
  }
}
