import { createPublicKey, verify } from "node:crypto";
import {
  RAW_MEMORY_MAX_CIPHERTEXT_BYTES,
  RAW_MEMORY_MAX_DEVICES,
  RAW_MEMORY_NONCE_BYTES,
  RAW_MEMORY_PUBLIC_KEY_BYTES,
  RAW_MEMORY_RECOVERY,
  RAW_MEMORY_SALT_BYTES,
  RAW_MEMORY_SIGNATURE_BYTES,
  RAW_MEMORY_SIGNER,
  RAW_MEMORY_SIGNER_BYTES,
  RAW_MEMORY_TAG_BYTES,
  RAW_MEMORY_WRAPPED_KEY_BYTES,
  type rawMemoryRoutes,
  rawMemorySignerStatement,
  rawMemoryWrapStatement,
} from "@tandem/core";
import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import type { AppContext } from "../../context";
import type { RawMemoryRecordsTable, Schema } from "../../db/schema";
import { badRequest, conflict, forbidden, notFound, tooManyRequests } from "../../http/errors";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";

/**
 * Raw memory (docs/raw-memory.md). The server never sees a key or a plaintext: it checks what it
 * can (sizes, ownership, versions, that a wrap is never replaced) and stores the rest as it came.
 */

export const BELONGS_TO_ANOTHER_ACCOUNT = "Raw Memory collector belongs to another account";

/** Records one account may store: at once, then per minute (over every instance). */
export const RAW_MEMORY_RECORDS_BURST = 60;
export const RAW_MEMORY_RECORDS_PER_MINUTE = 60;

type Db = Kysely<Schema> | Transaction<Schema>;
type RecordRow = Omit<Selectable<RawMemoryRecordsTable>, "ciphertext"> & { ciphertext_bytes: number };

/** Decodes base64 of exactly `bytes` bytes (or at most, with `atMost`), else a 400 naming `what`. */
function decode(text: string, what: string, bytes: number, atMost = false): Buffer {
  // The schema lets only the base64 alphabet through; a length that is no multiple of 4 is cut short.
  if (text.length % 4 !== 0) throw badRequest("invalid_base64", `${what} is truncated base64`);
  const buffer = Buffer.from(text, "base64");
  if (atMost ? buffer.length > bytes : buffer.length !== bytes) {
    throw badRequest("invalid_size", `${what} is ${buffer.length} bytes; it must be ${atMost ? "at most " : ""}${bytes}`);
  }
  return buffer;
}

function publicKey(text: string, what: string): string {
  const key = decode(text, what, RAW_MEMORY_PUBLIC_KEY_BYTES);
  if (key.every((byte) => byte === 0)) throw badRequest("invalid_key", `${what} is not an X25519 public key`);
  return key.toString("base64");
}

function recordMeta(row: RecordRow) {
  return {
    recordId: row.record_id,
    deviceId: row.device_id,
    runtime: row.runtime,
    sessionIdHash: row.session_id_hash,
    createdAt: row.created_at,
    keyVersion: row.key_version,
    alg: row.alg,
    nonce: row.nonce,
    plaintextBytes: Number(row.plaintext_bytes),
    ciphertextBytes: Number(row.ciphertext_bytes),
    storedAt: row.stored_at,
    cursor: String(row.id),
  };
}

function selectMeta(db: Db) {
  return db
    .selectFrom("raw_memory_records")
    .select([
      "id",
      "owner_id",
      "record_id",
      "device_id",
      "runtime",
      "session_id_hash",
      "created_at",
      "key_version",
      "alg",
      "nonce",
      "plaintext_bytes",
      "stored_at",
      sql<number>`length(ciphertext)`.as("ciphertext_bytes"),
    ]);
}

async function account(db: Db, ownerId: number) {
  return db.selectFrom("raw_memory_accounts").selectAll().where("owner_id", "=", ownerId).executeTakeFirst();
}

/** The owner's device, 409 when another account enrolled it, 404 when nobody did. */
async function ownedDevice(db: Db, ownerId: number, deviceId: string) {
  const row = await db.selectFrom("raw_memory_devices").selectAll().where("device_id", "=", deviceId).executeTakeFirst();
  if (row && Number(row.owner_id) !== ownerId) throw conflict("device_belongs_to_another_account", BELONGS_TO_ANOTHER_ACCOUNT);
  if (!row) throw notFound("device");
  return row;
}

/** The devices holding `keyVersion` (a wrap of it), by id. */
async function holders(db: Db, ownerId: number, keyVersion: number): Promise<Set<string>> {
  const rows = await db
    .selectFrom("raw_memory_keys")
    .select("recipient")
    .where("owner_id", "=", ownerId)
    .where("key_version", "=", keyVersion)
    .where("recipient", "not in", [RAW_MEMORY_RECOVERY, RAW_MEMORY_SIGNER])
    .execute();
  return new Set(rows.map((row) => row.recipient));
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((item) => b.has(item));
}

async function keysView(db: Db, ownerId: number, recipient?: string) {
  const row = await account(db, ownerId);
  const wraps = await db
    .selectFrom("raw_memory_keys")
    .select(["key_version", "recipient", "wrapped"])
    .where("owner_id", "=", ownerId)
    .where("recipient", "!=", RAW_MEMORY_SIGNER)
    .$if(recipient !== undefined, (qb) => qb.where("recipient", "=", recipient as string))
    .orderBy("key_version")
    .orderBy("recipient")
    .execute();
  return {
    success: true as const,
    currentVersion: row?.current_version ?? 0,
    recovery: row
      ? {
          publicKey: row.recovery_public_key,
          salt: row.recovery_salt,
          scrypt: JSON.parse(row.recovery_scrypt) as { N: number; r: number; p: number },
        }
      : null,
    wraps: wraps.map((wrap) => ({ keyVersion: wrap.key_version, recipient: wrap.recipient, wrapped: wrap.wrapped })),
  };
}

interface Wrap {
  keyVersion: number;
  recipient: string;
  wrapped: string;
  proof?: string | undefined;
}

/** DER prefix of an Ed25519 SubjectPublicKeyInfo: the 32 raw bytes follow. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** Whether `signature` (base64) is the Ed25519 signature of `statement` by `publicKey` (base64). */
function signedBy(publicKey: string, statement: string, signature: string): boolean {
  const sig = Buffer.from(signature, "base64");
  if (sig.length !== RAW_MEMORY_SIGNATURE_BYTES) return false;
  try {
    const key = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKey, "base64")]),
      format: "der",
      type: "spki",
    });
    return verify(null, Buffer.from(statement, "utf8"), key, sig);
  } catch {
    return false;
  }
}

/** The stored signer of `keyVersion`; an account made before signers has none and takes no wrap (409). */
async function signerOf(db: Db, ownerId: number, keyVersion: number): Promise<string> {
  const row = await db
    .selectFrom("raw_memory_keys")
    .select("wrapped")
    .where("owner_id", "=", ownerId)
    .where("key_version", "=", keyVersion)
    .where("recipient", "=", RAW_MEMORY_SIGNER)
    .executeTakeFirst();
  if (!row) {
    throw conflict(
      "key_unsigned",
      `key version ${keyVersion} has no signer (set up by an earlier preview build): it takes no new wrap and no rotation`,
    );
  }
  return row.wrapped;
}

async function insertSigner(tx: Transaction<Schema>, ownerId: number, keyVersion: number, publicKey: string, now: string) {
  const key = decode(publicKey, "signer", RAW_MEMORY_SIGNER_BYTES).toString("base64");
  await tx
    .insertInto("raw_memory_keys")
    .values({ owner_id: ownerId, key_version: keyVersion, recipient: RAW_MEMORY_SIGNER, wrapped: key, created_at: now })
    .execute();
  return key;
}

/**
 * Refuses (403 `invalid_proof`) a wrap not signed by its version's signer: the server cannot open a
 * wrap, but it can tell that whoever made it holds the key. A key holder without an enrolled device
 * or the recovery code cannot put a device among the holders (and so into the next rotation).
 */
async function checkProofs(db: Db, ownerId: number, wraps: readonly Wrap[], signers: Map<number, string>): Promise<void> {
  const row = await account(db, ownerId);
  for (const wrap of wraps) {
    const what = `the wrap of version ${wrap.keyVersion} for ${wrap.recipient}`;
    let signer = signers.get(wrap.keyVersion);
    if (signer === undefined) {
      signer = await signerOf(db, ownerId, wrap.keyVersion);
      signers.set(wrap.keyVersion, signer);
    }
    const recipientKey =
      wrap.recipient === RAW_MEMORY_RECOVERY ? row?.recovery_public_key : (await ownedDevice(db, ownerId, wrap.recipient)).public_key;
    const wrapped = decode(wrap.wrapped, what, RAW_MEMORY_WRAPPED_KEY_BYTES).toString("base64");
    const statement = rawMemoryWrapStatement(wrap.keyVersion, wrap.recipient, recipientKey ?? "", wrapped);
    if (!wrap.proof || !signedBy(signer, statement, wrap.proof)) {
      throw forbidden(
        "invalid_proof",
        `${what} is not signed by that version's key: only an enrolled computer or the recovery code can give a device the key`,
      );
    }
  }
}

/** Stores wraps; one already stored must be the same bytes (a wrap is never replaced). */
async function insertWraps(tx: Transaction<Schema>, ownerId: number, wraps: readonly Wrap[], now: string): Promise<void> {
  for (const wrap of wraps) {
    const wrapped = decode(
      wrap.wrapped,
      `the wrap of version ${wrap.keyVersion} for ${wrap.recipient}`,
      RAW_MEMORY_WRAPPED_KEY_BYTES,
    ).toString("base64");
    await tx
      .insertInto("raw_memory_keys")
      .values({ owner_id: ownerId, key_version: wrap.keyVersion, recipient: wrap.recipient, wrapped, created_at: now })
      .onConflict((oc) => oc.columns(["owner_id", "key_version", "recipient"]).doNothing())
      .execute();
    const stored = await tx
      .selectFrom("raw_memory_keys")
      .select("wrapped")
      .where("owner_id", "=", ownerId)
      .where("key_version", "=", wrap.keyVersion)
      .where("recipient", "=", wrap.recipient)
      .executeTakeFirstOrThrow();
    if (stored.wrapped !== wrapped) {
      throw conflict("wrap_exists", `version ${wrap.keyVersion} is already wrapped for ${wrap.recipient}; a wrap is never replaced`);
    }
  }
}

function checkDistinct(wraps: readonly { keyVersion?: number; recipient: string }[]): void {
  const seen = new Set<string>();
  for (const wrap of wraps) {
    const key = `${wrap.keyVersion ?? ""}|${wrap.recipient}`;
    if (seen.has(key)) throw badRequest("duplicate_wrap", `${wrap.recipient} is named twice for one version`);
    seen.add(key);
  }
}

interface RotationInput {
  keyVersion: number;
  signer?: { publicKey: string; endorsement: string } | undefined;
  wraps: readonly { recipient: string; wrapped: string; proof?: string | undefined }[];
}

/**
 * Moves the account to the next key version: `wraps` must be exactly the recovery code and every
 * device in `devices` (the remaining devices holding the current version). The version moves in one
 * conditional UPDATE first, so of two rotations racing (on any instance) one wins and the other is a 409.
 */
async function rotate(
  tx: Transaction<Schema>,
  ownerId: number,
  current: number,
  rotation: RotationInput | undefined,
  devices: ReadonlySet<string>,
  now: string,
): Promise<number> {
  if (!rotation) {
    throw badRequest(
      "rotation_required",
      `the account key must rotate: send rotation {keyVersion: ${current + 1}, wraps} for the remaining devices`,
    );
  }
  if (rotation.keyVersion !== current + 1) {
    throw conflict("key_version_conflict", `the current key version is ${current}; a rotation makes version ${current + 1}`);
  }
  checkDistinct(rotation.wraps);
  const expected = new Set([...devices, RAW_MEMORY_RECOVERY]);
  const given = new Set(rotation.wraps.map((wrap) => wrap.recipient));
  if (!sameSet(expected, given)) {
    const missing = [...expected].filter((id) => !given.has(id));
    const extra = [...given].filter((id) => !expected.has(id));
    throw badRequest(
      "rotation_recipients",
      `a rotation wraps the new key for the recovery code and exactly the remaining devices that hold version ${current}` +
        `${missing.length ? `; missing: ${missing.join(", ")}` : ""}${extra.length ? `; not expected: ${extra.join(", ")}` : ""}`,
    );
  }
  // Only a holder of the current key can make the next one: its signer endorses the new signer.
  const endorsed = rotation.signer;
  const currentSigner = await signerOf(tx, ownerId, current);
  if (!endorsed || !signedBy(currentSigner, rawMemorySignerStatement(current + 1, endorsed.publicKey), endorsed.endorsement)) {
    throw forbidden(
      "invalid_proof",
      `a rotation carries the new version's signer endorsed by version ${current}'s: only an enrolled computer holding the key can rotate it`,
    );
  }
  // The version moves first (a conditional UPDATE, which holds the account's row until the transaction ends): of two
  // rotations at once the second waits here and is told the key changed, rather than failing later on a device the
  // first one forgot. A wrap that fails its proof below rolls the move back.
  const moved = await tx
    .updateTable("raw_memory_accounts")
    .set({ current_version: current + 1, updated_at: now })
    .where("owner_id", "=", ownerId)
    .where("current_version", "=", current)
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) throw conflict("key_version_conflict", "the account key changed meanwhile; read the keys again");
  const nextWraps = rotation.wraps.map((wrap) => ({ ...wrap, keyVersion: current + 1 }));
  await checkProofs(tx, ownerId, nextWraps, new Map([[current + 1, endorsed.publicKey]]));
  await insertSigner(tx, ownerId, current + 1, endorsed.publicKey, now);
  await insertWraps(tx, ownerId, nextWraps, now);
  return current + 1;
}

export function rawMemoryHandlers(app: AppContext): RouteHandlers<keyof typeof rawMemoryRoutes> {
  const { db, clock } = app;
  const records = app.shared.limiter("raw-memory-records", { perMinute: RAW_MEMORY_RECORDS_PER_MINUTE, burst: RAW_MEMORY_RECORDS_BURST });

  async function devicesView(ownerId: number) {
    const row = await account(db, ownerId);
    const current = row?.current_version ?? 0;
    const [devices, counts, holding] = await Promise.all([
      db.selectFrom("raw_memory_devices").selectAll().where("owner_id", "=", ownerId).orderBy("enrolled_at").orderBy("device_id").execute(),
      db
        .selectFrom("raw_memory_records")
        .select([
          "device_id",
          (eb) => eb.fn.countAll<number>().as("records"),
          sql<number>`coalesce(sum(length(ciphertext)), 0)`.as("bytes"),
        ])
        .where("owner_id", "=", ownerId)
        .groupBy("device_id")
        .execute(),
      holders(db, ownerId, current),
    ]);
    const byDevice = new Map(counts.map((count) => [count.device_id, count]));
    return {
      currentVersion: current,
      devices: devices.map((device) => ({
        deviceId: device.device_id,
        name: device.name,
        publicKey: device.public_key,
        enrolledAt: device.enrolled_at,
        hasCurrentKey: holding.has(device.device_id),
        records: Number(byDevice.get(device.device_id)?.records ?? 0),
        bytes: Number(byDevice.get(device.device_id)?.bytes ?? 0),
      })),
    };
  }

  async function deviceView(ownerId: number, deviceId: string) {
    const view = await devicesView(ownerId);
    return view.devices.find((device) => device.deviceId === deviceId) as (typeof view.devices)[number];
  }

  return {
    enrolRawMemoryDevice: async ({ input, principal }) => {
      const { deviceId, name } = input.body;
      const key = publicKey(input.body.publicKey, "publicKey");
      const owner = principal.userId;
      const isNew = await db.transaction().execute(async (tx) => {
        const existing = await tx.selectFrom("raw_memory_devices").selectAll().where("device_id", "=", deviceId).executeTakeFirst();
        if (!existing) {
          const { count } = await tx
            .selectFrom("raw_memory_devices")
            .select((eb) => eb.fn.countAll<number>().as("count"))
            .where("owner_id", "=", owner)
            .executeTakeFirstOrThrow();
          if (Number(count) >= RAW_MEMORY_MAX_DEVICES) {
            throw conflict("too_many_devices", `${RAW_MEMORY_MAX_DEVICES} devices are enrolled already; forget one first`);
          }
          const inserted = await tx
            .insertInto("raw_memory_devices")
            .values({ device_id: deviceId, owner_id: owner, name: name ?? "", public_key: key, enrolled_at: clock.iso() })
            .onConflict((oc) => oc.column("device_id").doNothing())
            .returning("device_id")
            .executeTakeFirst();
          if (inserted) return true;
        }
        // Enrolled before (or by a request racing this one): the same account and key is this enrolment again.
        const row = await tx.selectFrom("raw_memory_devices").selectAll().where("device_id", "=", deviceId).executeTakeFirstOrThrow();
        if (Number(row.owner_id) !== owner) throw conflict("device_belongs_to_another_account", BELONGS_TO_ANOTHER_ACCOUNT);
        if (row.public_key !== key) {
          throw conflict("device_key_conflict", "this device is enrolled with another public key; forget it first to enrol it again");
        }
        return false;
      });
      const device = await deviceView(owner, deviceId);
      return isNew ? created({ success: true, device }) : { success: true, device };
    },

    listRawMemoryDevices: async ({ principal }) => ({ success: true, ...(await devicesView(principal.userId)) }),

    forgetRawMemoryDevice: async ({ input, principal }) => {
      const owner = principal.userId;
      const { deviceId } = input.params;
      const now = clock.iso();
      return db.transaction().execute(async (tx) => {
        await ownedDevice(tx, owner, deviceId);
        const row = await account(tx, owner);
        let currentVersion = row?.current_version ?? 0;
        if (row) {
          const remaining = await holders(tx, owner, row.current_version);
          remaining.delete(deviceId);
          currentVersion = await rotate(tx, owner, row.current_version, input.body.rotation, remaining, now);
        } else if (input.body.rotation) {
          throw badRequest("no_key", "the account has no key yet: there is nothing to rotate");
        }
        const deleted = await tx
          .deleteFrom("raw_memory_records")
          .where("owner_id", "=", owner)
          .where("device_id", "=", deviceId)
          .executeTakeFirst();
        await tx.deleteFrom("raw_memory_keys").where("owner_id", "=", owner).where("recipient", "=", deviceId).execute();
        await tx.deleteFrom("raw_memory_devices").where("device_id", "=", deviceId).execute();
        return { success: true, deletedRecords: Number(deleted.numDeletedRows), currentVersion };
      });
    },

    getRawMemoryKeys: async ({ input, principal }) => keysView(db, principal.userId, input.query.recipient),

    putRawMemoryKeys: async ({ input, principal }) => {
      const owner = principal.userId;
      const { wraps, recovery, signer } = input.body;
      const now = clock.iso();
      checkDistinct(wraps);
      await db.transaction().execute(async (tx) => {
        for (const wrap of wraps) if (wrap.recipient !== RAW_MEMORY_RECOVERY) await ownedDevice(tx, owner, wrap.recipient);
        const row = await account(tx, owner);
        if (!row) {
          // The first version: the recovery code and at least one device, nothing else.
          if (!recovery) throw badRequest("recovery_required", "the first key version comes with the recovery code's public key");
          if (wraps.some((wrap) => wrap.keyVersion !== 1)) throw badRequest("key_version", "the first key version is 1");
          if (!wraps.some((wrap) => wrap.recipient === RAW_MEMORY_RECOVERY) || wraps.length < 2) {
            throw badRequest("first_key_recipients", "the first key version is wrapped for the recovery code and at least one device");
          }
          const recoveryKey = publicKey(recovery.publicKey, "recovery.publicKey");
          const salt = decode(recovery.salt, "recovery.salt", RAW_MEMORY_SALT_BYTES).toString("base64");
          const inserted = await tx
            .insertInto("raw_memory_accounts")
            .values({
              owner_id: owner,
              current_version: 1,
              recovery_public_key: recoveryKey,
              recovery_salt: salt,
              recovery_scrypt: JSON.stringify(recovery.scrypt),
              created_at: now,
              updated_at: now,
            })
            .onConflict((oc) => oc.column("owner_id").doNothing())
            .returning("owner_id")
            .executeTakeFirst();
          if (!inserted) throw conflict("key_exists", "another device set the first key meanwhile; read the keys again");
          if (typeof signer !== "string") throw badRequest("signer_required", "the first key version comes with its signer's public key");
          const first = await insertSigner(tx, owner, 1, signer, now);
          await checkProofs(tx, owner, wraps, new Map([[1, first]]));
          await insertWraps(tx, owner, wraps, now);
          return;
        }
        if (recovery && recovery.publicKey !== row.recovery_public_key) {
          throw conflict("recovery_exists", "the recovery code is set once, with the first key version");
        }
        const next = wraps.filter((wrap) => wrap.keyVersion === row.current_version + 1);
        const beyond = wraps.find((wrap) => wrap.keyVersion > row.current_version + 1);
        if (beyond)
          throw badRequest("key_version", `version ${beyond.keyVersion} does not exist (the current one is ${row.current_version})`);
        if (next.length > 0) {
          // A rotation without forgetting anyone: every device holding the current version and the recovery code.
          await rotate(
            tx,
            owner,
            row.current_version,
            { keyVersion: row.current_version + 1, signer: typeof signer === "object" ? signer : undefined, wraps: next },
            await holders(tx, owner, row.current_version),
            now,
          );
        }
        const existing = wraps.filter((wrap) => wrap.keyVersion <= row.current_version);
        await checkProofs(tx, owner, existing, new Map());
        await insertWraps(tx, owner, existing, now);
      });
      return keysView(db, owner);
    },

    postRawMemoryRecord: async ({ input, principal }) => {
      const owner = principal.userId;
      const body = input.body;
      const retryAfter = await records.take(`user:${owner}`);
      if (retryAfter !== null) throw tooManyRequests(retryAfter);
      const nonce = decode(body.nonce, "nonce", RAW_MEMORY_NONCE_BYTES).toString("base64");
      const ciphertext = decode(body.ciphertext, "ciphertext", RAW_MEMORY_MAX_CIPHERTEXT_BYTES, true);
      if (ciphertext.length !== body.plaintextBytes + RAW_MEMORY_TAG_BYTES) {
        throw badRequest(
          "ciphertext_size",
          `the ciphertext is ${ciphertext.length} bytes; ${body.alg} over ${body.plaintextBytes} bytes makes ${body.plaintextBytes + RAW_MEMORY_TAG_BYTES}`,
        );
      }
      const row = await account(db, owner);
      await ownedDevice(db, owner, body.deviceId);
      if (!row || body.keyVersion > row.current_version) throw badRequest("key_version", `key version ${body.keyVersion} does not exist`);
      const existing = await db
        .selectFrom("raw_memory_records")
        .selectAll()
        .where("owner_id", "=", owner)
        .where("record_id", "=", body.recordId)
        .executeTakeFirst();
      const same = (stored: NonNullable<typeof existing>) =>
        stored.device_id === body.deviceId &&
        stored.runtime === body.runtime &&
        stored.session_id_hash === body.sessionIdHash &&
        stored.created_at === body.createdAt &&
        stored.key_version === body.keyVersion &&
        stored.alg === body.alg &&
        stored.nonce === nonce &&
        Number(stored.plaintext_bytes) === body.plaintextBytes &&
        Buffer.from(stored.ciphertext).equals(ciphertext);
      const answer = async () => {
        const stored = await selectMeta(db).where("owner_id", "=", owner).where("record_id", "=", body.recordId).executeTakeFirstOrThrow();
        return { success: true as const, record: recordMeta(stored) };
      };
      if (existing) {
        if (!same(existing)) throw conflict("record_conflict", "a record with this id and other content is stored already");
        return answer();
      }
      // Only new records: stale keys and the quota do not turn a retry of a stored record away.
      if (body.keyVersion !== row.current_version) {
        throw conflict("stale_key_version", `the account key rotated: encrypt with version ${row.current_version}`);
      }
      if (!(await holders(db, owner, body.keyVersion)).has(body.deviceId)) {
        throw conflict("device_has_no_key", `device ${body.deviceId} holds no key of version ${body.keyVersion}`);
      }
      await app.sync.quota.assertUserRoom(owner, ciphertext.length);
      const inserted = await db
        .insertInto("raw_memory_records")
        .values({
          owner_id: owner,
          record_id: body.recordId,
          device_id: body.deviceId,
          runtime: body.runtime,
          session_id_hash: body.sessionIdHash,
          created_at: body.createdAt,
          key_version: body.keyVersion,
          alg: body.alg,
          nonce,
          ciphertext,
          plaintext_bytes: body.plaintextBytes,
          stored_at: clock.iso(),
        })
        .onConflict((oc) => oc.columns(["owner_id", "record_id"]).doNothing())
        .returning("id")
        .executeTakeFirst();
      if (!inserted) {
        // A request racing this one stored the id first: the same content is that record.
        const raced = await db
          .selectFrom("raw_memory_records")
          .selectAll()
          .where("owner_id", "=", owner)
          .where("record_id", "=", body.recordId)
          .executeTakeFirstOrThrow();
        if (!same(raced)) throw conflict("record_conflict", "a record with this id and other content is stored already");
        return answer();
      }
      return created(await answer());
    },

    listRawMemoryRecords: async ({ input, principal }) => {
      const { deviceId, after, limit } = input.query;
      const rows = await selectMeta(db)
        .where("owner_id", "=", principal.userId)
        .$if(deviceId !== undefined, (qb) => qb.where("device_id", "=", deviceId as string))
        .$if(after !== undefined, (qb) => qb.where("id", ">", Number(after)))
        .orderBy("id")
        .limit(limit + 1)
        .execute();
      const page = rows.slice(0, limit);
      return { success: true, records: page.map(recordMeta), nextAfter: rows.length > limit ? String(page[page.length - 1]?.id) : null };
    },

    getRawMemoryRecord: async ({ input, principal }) => {
      const row = await db
        .selectFrom("raw_memory_records")
        .selectAll()
        .where("owner_id", "=", principal.userId)
        .where("record_id", "=", input.params.recordId)
        .executeTakeFirst();
      // Another owner's record is as absent as one that never was.
      if (!row) throw notFound("record");
      const ciphertext = Buffer.from(row.ciphertext);
      return {
        success: true,
        record: { ...recordMeta({ ...row, ciphertext_bytes: ciphertext.length }), ciphertext: ciphertext.toString("base64") },
      };
    },
  };
}
