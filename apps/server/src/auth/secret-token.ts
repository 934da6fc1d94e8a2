import { hash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Credentials are `<prefix><id><secret>`: a 12-character public id (to find the row, and to name
 * the key in `keys revoke`) followed by a 32-character secret (about 190 random bits). Only a
 * SHA-256 hash of the secret is stored. A slow password hash buys nothing for a secret this
 * random, and a fast one keeps authentication cheap on every request.
 */
export const TOKEN_ID_LENGTH = 12;
export const TOKEN_SECRET_LENGTH = 32;

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE62 = /^[0-9A-Za-z]+$/;

/** Uniformly random base62: bytes ≥ 248 are rejected so no character is more likely than another. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** SHA-256 in one call: a `Hash` object costs more than hashing a secret this short. */
function secretDigest(secret: string): Buffer {
  return hash("sha256", secret, "buffer");
}

export function hashSecret(secret: string): string {
  return secretDigest(secret).toString("hex");
}

export interface IssuedToken {
  id: string;
  token: string;
  secretHash: string;
}

export function issueToken(prefix: string): IssuedToken {
  const id = randomBase62(TOKEN_ID_LENGTH);
  const secret = randomBase62(TOKEN_SECRET_LENGTH);
  return { id, token: `${prefix}${id}${secret}`, secretHash: hashSecret(secret) };
}

/** Splits a token of the given prefix into id and secret; null if it is not of that form. */
export function parseToken(prefix: string, token: string): { id: string; secret: string } | null {
  if (!token.startsWith(prefix)) return null;
  const body = token.slice(prefix.length);
  if (body.length !== TOKEN_ID_LENGTH + TOKEN_SECRET_LENGTH || !BASE62.test(body)) return null;
  return { id: body.slice(0, TOKEN_ID_LENGTH), secret: body.slice(TOKEN_ID_LENGTH) };
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = secretDigest(secret);
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
