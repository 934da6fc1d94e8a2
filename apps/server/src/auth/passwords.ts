import { randomBytes, type ScryptOptions, scrypt as scryptCallback, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import { badRequest } from "../http/errors";

/**
 * Account passwords, for signing in to the server's own pages (sign-in, consent, first run,
 * device approval). scrypt from node:crypto; the stored form names its parameters, so they can be
 * raised later without breaking stored hashes.
 */

const N = 16_384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** Bounded both ways: a password is typed by a person, and scrypt's cost must not be the attacker's to choose. */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize("NFC"), salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64")}$${key.toString("base64")}`;
}

/** A hash nothing matches, checked when the account is unknown so the answer takes as long either way. */
const DUMMY_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString("base64")}$${Buffer.alloc(KEY_LENGTH).toString("base64")}`;

/** Constant-time check of `password` against a stored hash; a missing or damaged hash never matches. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (password.length > PASSWORD_MAX_LENGTH) return false;
  const parts = (stored ?? DUMMY_HASH).split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [n, r, p] = parts.slice(1, 4).map((v) => Number.parseInt(v ?? "", 10)) as [number, number, number];
  if (!(n >= 1024 && n <= 1 << 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16)) return false;
  const salt = Buffer.from(parts[4] ?? "", "base64");
  const expected = Buffer.from(parts[5] ?? "", "base64");
  if (expected.length !== KEY_LENGTH) return false;
  const actual = await scrypt(password, salt, { N: n, r, p });
  return timingSafeEqual(actual, expected) && stored !== null;
}

/** Sets (or replaces) a user's password. */
export async function setPassword(db: Kysely<Schema>, userId: number, password: string): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw badRequest("invalid_password", `password ${problem}`);
  const hash = await hashPassword(password);
  await db.updateTable("users").set({ password_hash: hash }).where("id", "=", userId).execute();
}
