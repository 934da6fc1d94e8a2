import { z } from "zod";
import { success, Timestamp } from "./common";
import { defineRoute } from "./route";

/**
 * Raw memory (preview, docs/raw-memory.md): end-to-end encrypted captures of local coding-agent
 * sessions. The server stores ciphertext and wrapped keys only; every byte it can check is a size.
 */

/** The largest ciphertext of one record, decoded, in bytes (10 MB). */
export const RAW_MEMORY_MAX_CIPHERTEXT_BYTES = 10 * 1024 * 1024;
/** XChaCha20-Poly1305's tag: a ciphertext is its plaintext plus these bytes. */
export const RAW_MEMORY_TAG_BYTES = 16;
/** XChaCha20-Poly1305's nonce. */
export const RAW_MEMORY_NONCE_BYTES = 24;
/** An X25519 public key. */
export const RAW_MEMORY_PUBLIC_KEY_BYTES = 32;
/** A wrapped account key: ephemeral X25519 public key (32) ‖ nonce (24) ‖ sealed 32-byte key with its tag (48). */
export const RAW_MEMORY_WRAPPED_KEY_BYTES = 104;
/** The recovery code's scrypt salt. */
export const RAW_MEMORY_SALT_BYTES = 16;
/** The one record cipher. */
export const RAW_MEMORY_ALG = "xchacha20poly1305";
export const RAW_MEMORY_RUNTIMES = ["claude-code", "codex"] as const;
export type RawMemoryRuntime = (typeof RAW_MEMORY_RUNTIMES)[number];
/** The recipient name of the recovery code's wrap, beside device ids. */
export const RAW_MEMORY_RECOVERY = "recovery";
/**
 * The reserved recipient under which each key version's signer (an Ed25519 public key derived from
 * that version's account key) is stored. Every wrap carries a signature by its version's signer, and
 * each new version's signer is endorsed by the current one's, so only someone who holds the key (an
 * enrolled device, or the recovery code) can wrap it for a device or rotate it (docs/raw-memory.md).
 */
export const RAW_MEMORY_SIGNER = "signer";
/** An Ed25519 public key, and a signature. */
export const RAW_MEMORY_SIGNER_BYTES = 32;
export const RAW_MEMORY_SIGNATURE_BYTES = 64;

/** What a wrap's `proof` signs: the version, the recipient and its public key, and the wrap itself. */
export function rawMemoryWrapStatement(keyVersion: number, recipient: string, recipientPublicKey: string, wrapped: string): string {
  return `tandem raw-memory wrap v1|${keyVersion}|${recipient}|${recipientPublicKey}|${wrapped}`;
}

/** What a rotation's `endorsement` signs (by the current version's signer): the next version's signer. */
export function rawMemorySignerStatement(keyVersion: number, signerPublicKey: string): string {
  return `tandem raw-memory signer v1|${keyVersion}|${signerPublicKey}`;
}

/** Devices one account may enrol. */
export const RAW_MEMORY_MAX_DEVICES = 20;
/** The request body of a record: its ciphertext in base64 (4/3 of 10 MB) and the metadata around it. */
export const RAW_MEMORY_RECORD_BODY_LIMIT = Math.ceil((RAW_MEMORY_MAX_CIPHERTEXT_BYTES + RAW_MEMORY_TAG_BYTES) / 3) * 4 + 64 * 1024;

const Base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: "must be base64" });
const Uuid = z.uuid({ error: "must be a UUID" });
const DeviceId = Uuid.describe("the collector's own id, chosen by the device (a UUID)");

export const RawMemoryDevice = z.object({
  deviceId: z.string(),
  name: z.string(),
  publicKey: z.string().describe("X25519 public key, base64 (32 bytes)"),
  enrolledAt: Timestamp,
  hasCurrentKey: z.boolean().describe("whether the current account key version is wrapped for it (false: enrolled, waiting for a key)"),
  records: z.number().int(),
  bytes: z.number().int().describe("the ciphertext bytes of its records (counted in the storage quota)"),
});

const Wrap = z.object({
  keyVersion: z.number().int().positive().max(1_000_000),
  recipient: z.string().min(1).max(64).describe(`a device id, or \`${RAW_MEMORY_RECOVERY}\``),
  wrapped: Base64.max(200).describe(
    `base64 of ${RAW_MEMORY_WRAPPED_KEY_BYTES} bytes: ephemeral X25519 public key ‖ nonce ‖ XChaCha20-Poly1305(key)`,
  ),
  proof: Base64.max(100)
    .optional()
    .describe("Ed25519 signature (base64, 64 bytes) by the version's signer over the wrap statement; required to store a wrap"),
});

const Signer = Base64.max(100).describe(`the version's signer: an Ed25519 public key (base64, ${RAW_MEMORY_SIGNER_BYTES} bytes)`);
const EndorsedSigner = z.object({
  publicKey: Signer,
  endorsement: Base64.max(100).describe("Ed25519 signature by the current version's signer over the signer statement"),
});

export const RawMemoryRecovery = z.object({
  publicKey: Base64.max(100).describe("the X25519 public key derived from the recovery code (scrypt), base64"),
  salt: Base64.max(100).describe("scrypt's salt, base64 (16 bytes)"),
  scrypt: z.object({
    N: z
      .number()
      .int()
      .min(2 ** 14)
      .max(2 ** 20),
    r: z.number().int().min(1).max(32),
    p: z.number().int().min(1).max(16),
  }),
});

const Rotation = z.object({
  keyVersion: z.number().int().positive().max(1_000_000).describe("the current version plus one"),
  signer: EndorsedSigner.optional().describe("the new version's signer, endorsed by the current one's; required"),
  wraps: z.array(Wrap.omit({ keyVersion: true })).max(RAW_MEMORY_MAX_DEVICES + 1),
});

export const RawMemoryRecordMeta = z.object({
  recordId: z.string(),
  deviceId: z.string(),
  runtime: z.enum(RAW_MEMORY_RUNTIMES),
  sessionIdHash: z.string(),
  createdAt: Timestamp,
  keyVersion: z.number().int(),
  alg: z.string(),
  nonce: z.string(),
  plaintextBytes: z.number().int(),
  ciphertextBytes: z.number().int(),
  storedAt: Timestamp,
  cursor: z.string().describe("pass as `after` to list the records stored after this one"),
});

const RecordBody = z.object({
  recordId: Uuid.describe("the client's id for the record: sending it again with the same content is answered 200"),
  deviceId: DeviceId,
  runtime: z.enum(RAW_MEMORY_RUNTIMES),
  sessionIdHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, { error: "must be 64 lowercase hex digits" })
    .describe("SHA-256 of the session's id, hex"),
  createdAt: z.iso.datetime({ error: "must be an ISO 8601 timestamp" }),
  keyVersion: z.number().int().positive().max(1_000_000),
  alg: z.literal(RAW_MEMORY_ALG),
  nonce: Base64.max(64),
  ciphertext: Base64.describe(
    `base64; at most ${RAW_MEMORY_MAX_CIPHERTEXT_BYTES} bytes decoded, exactly plaintextBytes + ${RAW_MEMORY_TAG_BYTES}`,
  ),
  plaintextBytes: z
    .number()
    .int()
    .min(0)
    .max(RAW_MEMORY_MAX_CIPHERTEXT_BYTES - RAW_MEMORY_TAG_BYTES),
});

const KeysAnswer = success({
  currentVersion: z.number().int().describe("0 before the first key"),
  recovery: RawMemoryRecovery.nullable(),
  wraps: z.array(Wrap),
});

export const rawMemoryRoutes = {
  enrolRawMemoryDevice: defineRoute({
    method: "POST",
    path: "/raw-memory/devices",
    category: "raw-memory",
    summary:
      "Enrol a collector device with its X25519 public key (again with the same key: 200). A device id enrolled by another account: 409",
    auth: "user",
    scope: "os.raw-memory:write",
    bodyLimit: 16 * 1024,
    body: z.object({
      deviceId: DeviceId,
      publicKey: Base64.max(100).describe("X25519 public key, base64 (32 bytes)"),
      name: z.string().trim().max(100).optional().describe("a label, e.g. the computer's name"),
    }),
    response: success({ device: RawMemoryDevice }),
    successStatuses: [201, 200],
  }),
  listRawMemoryDevices: defineRoute({
    method: "GET",
    path: "/raw-memory/devices",
    category: "raw-memory",
    summary: "The account's enrolled collector devices",
    auth: "user",
    scope: "os.raw-memory:read",
    response: success({ devices: z.array(RawMemoryDevice), currentVersion: z.number().int() }),
  }),
  forgetRawMemoryDevice: defineRoute({
    method: "DELETE",
    path: "/raw-memory/devices/:deviceId",
    category: "raw-memory",
    summary:
      "Forget a device: its records and wrapped keys go, and the account key rotates: the body carries the next version wrapped for every remaining device holding the current one and the recovery code",
    auth: "user",
    scope: "os.raw-memory:write",
    bodyLimit: 64 * 1024,
    params: z.object({ deviceId: z.string().min(1).max(64) }),
    body: z.object({ rotation: Rotation.optional().describe("required once the account has a key") }),
    response: success({ deletedRecords: z.number().int(), currentVersion: z.number().int() }),
  }),
  getRawMemoryKeys: defineRoute({
    method: "GET",
    path: "/raw-memory/keys",
    category: "raw-memory",
    summary: "The account key's versions, wrapped per device and for the recovery code (never a key in the clear)",
    auth: "user",
    scope: "os.raw-memory:read",
    query: z.object({ recipient: z.string().min(1).max(64).optional().describe(`a device id or \`${RAW_MEMORY_RECOVERY}\``) }),
    response: KeysAnswer,
  }),
  putRawMemoryKeys: defineRoute({
    method: "PUT",
    path: "/raw-memory/keys",
    category: "raw-memory",
    summary:
      "Add wrapped keys: the first version (with the recovery public key), or existing versions wrapped for a newly enrolled device. A wrap never changes once stored",
    auth: "user",
    scope: "os.raw-memory:write",
    bodyLimit: 256 * 1024,
    body: z.object({
      recovery: RawMemoryRecovery.optional().describe("with the first version only"),
      signer: z
        .union([Signer, EndorsedSigner])
        .optional()
        .describe("the first version's signer (a public key), or the next version's, endorsed (a rotation through PUT)"),
      wraps: z.array(Wrap).min(1).max(1000),
    }),
    response: KeysAnswer,
  }),
  postRawMemoryRecord: defineRoute({
    method: "POST",
    path: "/raw-memory/records",
    category: "raw-memory",
    summary:
      "Store an encrypted record (≤ 10 MB of ciphertext, counted in the storage quota); the same record id with the same content again is answered 200, with other content 409",
    auth: "user",
    scope: "os.raw-memory:write",
    bodyLimit: RAW_MEMORY_RECORD_BODY_LIMIT,
    body: RecordBody,
    response: success({ record: RawMemoryRecordMeta }),
    successStatuses: [201, 200],
  }),
  listRawMemoryRecords: defineRoute({
    method: "GET",
    path: "/raw-memory/records",
    category: "raw-memory",
    summary: "Records' metadata in the order they were stored (no ciphertext)",
    auth: "user",
    scope: "os.raw-memory:read",
    query: z.object({
      deviceId: z.string().min(1).max(64).optional(),
      after: z
        .string()
        .regex(/^\d{1,15}$/, { error: "must be a cursor from a previous answer" })
        .optional(),
      limit: z.coerce.number().int().min(1).max(500).default(100),
    }),
    response: success({ records: z.array(RawMemoryRecordMeta), nextAfter: z.string().nullable() }),
  }),
  getRawMemoryRecord: defineRoute({
    method: "GET",
    path: "/raw-memory/records/:recordId",
    category: "raw-memory",
    summary: "One record with its ciphertext (base64)",
    auth: "user",
    scope: "os.raw-memory:read",
    params: z.object({ recordId: z.string().min(1).max(64) }),
    response: success({ record: RawMemoryRecordMeta.extend({ ciphertext: z.string() }) }),
  }),
} as const;
