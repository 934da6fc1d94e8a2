import { createHash, randomBytes } from "node:crypto";

/**
 * Device-code pairing secrets. The user code is read off one screen and typed or clicked on
 * another, so it uses RFC 8628's consonant-only alphabet: no digits or vowels to confuse, no
 * words spelt by accident. Eight of twenty letters is 2.56·10¹⁰ codes; guessing is further
 * limited by the user-key rate limit and the 10-minute life. The poll token is a bearer secret
 * of 256 random bits; only its SHA-256 is stored.
 */
const ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const CODE_LENGTH = 8;
/** Bytes ≥ 240 are rejected so every letter is equally likely (240 = 12 × 20). */
const UNBIASED_LIMIT = 240;

export function newUserCode(): string {
  let code = "";
  while (code.length < CODE_LENGTH) {
    for (const byte of randomBytes(CODE_LENGTH * 2)) {
      if (byte < UNBIASED_LIMIT && code.length < CODE_LENGTH) code += ALPHABET[byte % ALPHABET.length];
    }
  }
  return code;
}

/** `abcd-efgh`, `ABCDEFGH`, ` abcd efgh ` → `ABCDEFGH`; null when it cannot be a code. */
export function normalizeUserCode(input: string): string | null {
  const code = input.replace(/[\s-]/g, "").toUpperCase();
  if (code.length !== CODE_LENGTH) return null;
  for (const char of code) if (!ALPHABET.includes(char)) return null;
  return code;
}

/** `ABCDEFGH` → `ABCD-EFGH`, as people read it. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export function newPollToken(): string {
  return `dcp_${randomBytes(32).toString("base64url")}`;
}

export function hashPollToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
