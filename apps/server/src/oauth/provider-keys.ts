import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { Kysely } from "kysely";
import { nowIso } from "../clock";
import type { SecretBox } from "../crypto/secret-box";
import type { Schema } from "../db/schema";

/**
 * The authorization server's secrets: a signing key (ES256) and the cookie keys. Made once,
 * sealed with the server secret and kept in the database, so every instance that shares the
 * database (and the secret) signs and verifies alike; the first instance to store one wins.
 */
export interface ProviderKeys {
  readonly signingKey: JWK;
  readonly cookieKeys: string[];
}

async function loadOrCreate(db: Kysely<Schema>, secrets: SecretBox, name: string, make: () => Promise<string>): Promise<string> {
  const purpose = `oauth_secrets.${name}`;
  const existing = await db.selectFrom("oauth_secrets").select("sealed").where("name", "=", name).executeTakeFirst();
  if (existing) return secrets.open(existing.sealed, purpose);
  await db
    .insertInto("oauth_secrets")
    .values({ name, sealed: secrets.seal(await make(), purpose), created_at: nowIso() })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  // Read back: if another instance stored one first, use theirs.
  const stored = await db.selectFrom("oauth_secrets").select("sealed").where("name", "=", name).executeTakeFirstOrThrow();
  return secrets.open(stored.sealed, purpose);
}

export async function loadProviderKeys(db: Kysely<Schema>, secrets: SecretBox): Promise<ProviderKeys> {
  const signing = await loadOrCreate(db, secrets, "signing-key", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = await exportJWK(privateKey);
    return JSON.stringify({ ...jwk, alg: "ES256", use: "sig", kid: randomBytes(9).toString("base64url") });
  });
  const cookie = await loadOrCreate(db, secrets, "cookie-key", async () => randomBytes(32).toString("base64url"));
  return { signingKey: JSON.parse(signing) as JWK, cookieKeys: [cookie] };
}

/** The public half of a signing key, for verifying tokens. */
export function publicJwk(key: JWK): JWK {
  const { d: _d, ...rest } = key;
  return rest;
}
