/**
 * Raw memory's client-side cryptography (docs/raw-memory.md), for the desktop host and tests; the
 * server never imports it. Every primitive is an audited @noble one: X25519 (@noble/curves),
 * XChaCha20-Poly1305 (@noble/ciphers), HKDF-SHA256, SHA-256 and scrypt (@noble/hashes). Nothing here
 * is a primitive of its own: only how they are put together, as age's X25519 stanza does.
 *
 * - Account key: 32 random bytes per key version.
 * - Wrap (for a device, or the recovery code's key pair): an ephemeral X25519 key pair; the shared
 *   secret with the recipient's public key, through HKDF-SHA256 (salt: ephemeral ‖ recipient public
 *   keys), keys XChaCha20-Poly1305 over the account key, with the recipient and version as associated
 *   data. The 104 bytes: ephemeral public key (32) ‖ nonce (24) ‖ sealed key (48).
 * - Recovery: scrypt(code, salt) is an X25519 private key. Its public key is stored on the server,
 *   so any device can wrap a new version for the recovery code without knowing the code.
 * - Signer (per version): an Ed25519 key pair whose seed is HKDF-SHA256 of the account key. Only a
 *   holder of the key can sign; the server verifies with the public key it was given (and endorsed).
 * - Record: XChaCha20-Poly1305 under the account key with a random 24-byte nonce; the associated
 *   data binds every metadata field (record id, device, runtime, session hash, time, version, size),
 *   so a ciphertext moved to another record or device fails to decrypt.
 */
import { xchacha20poly1305 } from "@noble/ciphers/chacha";
import { randomBytes } from "@noble/ciphers/webcrypto";
import { ed25519, x25519 } from "@noble/curves/ed25519";
import { hkdf } from "@noble/hashes/hkdf";
import { scryptAsync } from "@noble/hashes/scrypt";
import { sha256 } from "@noble/hashes/sha2";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils";
import {
  RAW_MEMORY_NONCE_BYTES,
  RAW_MEMORY_PUBLIC_KEY_BYTES,
  RAW_MEMORY_SALT_BYTES,
  RAW_MEMORY_WRAPPED_KEY_BYTES,
  type RawMemoryRuntime,
} from "./api/raw-memory";

export const ACCOUNT_KEY_BYTES = 32;
/** scrypt's cost for the recovery code: 64 MiB, about half a second. */
export const RECOVERY_SCRYPT = { N: 2 ** 16, r: 8, p: 1 } as const;

const WRAP_INFO = utf8ToBytes("tandem raw-memory wrap v1");

export interface KeyPair {
  readonly privateKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

export function newKeyPair(): KeyPair {
  const privateKey = x25519.utils.randomPrivateKey();
  return { privateKey, publicKey: x25519.getPublicKey(privateKey) };
}

export function publicKeyOf(privateKey: Uint8Array): Uint8Array {
  return x25519.getPublicKey(privateKey);
}

export function newAccountKey(): Uint8Array {
  return randomBytes(ACCOUNT_KEY_BYTES);
}

export const toBase64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
export const fromBase64 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "base64"));

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const wrapAad = (recipient: string, keyVersion: number) => utf8ToBytes(`tandem raw-memory key|${recipient}|${keyVersion}`);

function wrapKey(shared: Uint8Array, ephemeralPublic: Uint8Array, recipientPublic: Uint8Array): Uint8Array {
  return hkdf(sha256, shared, concat(ephemeralPublic, recipientPublic), WRAP_INFO, 32);
}

/** The account key of `keyVersion` sealed for `recipient` (a device id or `recovery`) and its public key. */
export function wrapAccountKey(accountKey: Uint8Array, recipientPublic: Uint8Array, recipient: string, keyVersion: number): Uint8Array {
  if (accountKey.length !== ACCOUNT_KEY_BYTES) throw new Error("an account key is 32 bytes");
  if (recipientPublic.length !== RAW_MEMORY_PUBLIC_KEY_BYTES) throw new Error("an X25519 public key is 32 bytes");
  const ephemeral = newKeyPair();
  const key = wrapKey(x25519.getSharedSecret(ephemeral.privateKey, recipientPublic), ephemeral.publicKey, recipientPublic);
  const nonce = randomBytes(RAW_MEMORY_NONCE_BYTES);
  const sealed = xchacha20poly1305(key, nonce, wrapAad(recipient, keyVersion)).encrypt(accountKey);
  return concat(ephemeral.publicKey, nonce, sealed);
}

/** Opens a wrap with the recipient's private key; throws when it is not this recipient's or was altered. */
export function unwrapAccountKey(wrapped: Uint8Array, privateKey: Uint8Array, recipient: string, keyVersion: number): Uint8Array {
  if (wrapped.length !== RAW_MEMORY_WRAPPED_KEY_BYTES) throw new Error(`a wrapped key is ${RAW_MEMORY_WRAPPED_KEY_BYTES} bytes`);
  const ephemeralPublic = wrapped.subarray(0, 32);
  const nonce = wrapped.subarray(32, 32 + RAW_MEMORY_NONCE_BYTES);
  const sealed = wrapped.subarray(32 + RAW_MEMORY_NONCE_BYTES);
  const key = wrapKey(x25519.getSharedSecret(privateKey, ephemeralPublic), ephemeralPublic, publicKeyOf(privateKey));
  return xchacha20poly1305(key, nonce, wrapAad(recipient, keyVersion)).decrypt(sealed);
}

const SIGNER_INFO = utf8ToBytes("tandem raw-memory signer v1");

export interface Signer {
  readonly publicKey: Uint8Array;
  sign(statement: string): Uint8Array;
}

/** The version's signer: Ed25519 with a seed derived from the account key (HKDF-SHA256). */
export function signerOf(accountKey: Uint8Array): Signer {
  if (accountKey.length !== ACCOUNT_KEY_BYTES) throw new Error("an account key is 32 bytes");
  const seed = hkdf(sha256, accountKey, undefined, SIGNER_INFO, 32);
  return { publicKey: ed25519.getPublicKey(seed), sign: (statement) => ed25519.sign(utf8ToBytes(statement), seed) };
}

/** Crockford's base32, without the letters that read as digits. */
const CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A recovery code: 130 random bits as 26 characters in groups (`ABCD-…`), shown to the owner once. */
export function newRecoveryCode(): string {
  const bytes = randomBytes(26);
  const chars = Array.from(bytes, (byte) => CODE_ALPHABET[byte & 31]).join("");
  return chars.match(/.{1,4}/g)?.join("-") ?? chars;
}

/** A code as typed: case, spaces and dashes do not matter; O, I and L read as 0, 1 and 1. */
export function normalizeRecoveryCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}

export interface RecoveryParams {
  readonly salt: Uint8Array;
  readonly scrypt: { readonly N: number; readonly r: number; readonly p: number };
}

/** The recovery code's key pair: scrypt of the code is the X25519 private key. */
export async function recoveryKeyPair(code: string, params: RecoveryParams): Promise<KeyPair> {
  const { N, r, p } = params.scrypt;
  const privateKey = await scryptAsync(utf8ToBytes(normalizeRecoveryCode(code)), params.salt, { N, r, p, dkLen: 32 });
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/** Fresh parameters; `scrypt` lower than {@link RECOVERY_SCRYPT} is for tests (the server takes N ≥ 2^14). */
export function newRecoveryParams(scrypt: RecoveryParams["scrypt"] = RECOVERY_SCRYPT): RecoveryParams {
  return { salt: randomBytes(RAW_MEMORY_SALT_BYTES), scrypt: { ...scrypt } };
}

/** What a record's ciphertext is bound to. */
export interface RecordBinding {
  readonly recordId: string;
  readonly deviceId: string;
  readonly runtime: RawMemoryRuntime;
  readonly sessionIdHash: string;
  readonly createdAt: string;
  readonly keyVersion: number;
  readonly plaintextBytes: number;
}

function recordAad(binding: RecordBinding): Uint8Array {
  const { recordId, deviceId, runtime, sessionIdHash, createdAt, keyVersion, plaintextBytes } = binding;
  return utf8ToBytes(
    JSON.stringify(["tandem raw-memory record v1", recordId, deviceId, runtime, sessionIdHash, createdAt, keyVersion, plaintextBytes]),
  );
}

export function encryptRecord(
  accountKey: Uint8Array,
  binding: Omit<RecordBinding, "plaintextBytes">,
  plaintext: Uint8Array,
): { nonce: Uint8Array; ciphertext: Uint8Array; plaintextBytes: number } {
  const nonce = randomBytes(RAW_MEMORY_NONCE_BYTES);
  const plaintextBytes = plaintext.length;
  const ciphertext = xchacha20poly1305(accountKey, nonce, recordAad({ ...binding, plaintextBytes })).encrypt(plaintext);
  return { nonce, ciphertext, plaintextBytes };
}

/** Throws when the ciphertext was altered, or belongs to another record, device or key. */
export function decryptRecord(accountKey: Uint8Array, binding: RecordBinding, nonce: Uint8Array, ciphertext: Uint8Array): Uint8Array {
  return xchacha20poly1305(accountKey, nonce, recordAad(binding)).decrypt(ciphertext);
}

/** What the server sees of a session's id: SHA-256 of the runtime and the id, hex. */
export function sessionIdHash(runtime: RawMemoryRuntime, sessionId: string): string {
  return bytesToHex(sha256(utf8ToBytes(`${runtime}:${sessionId}`)));
}
