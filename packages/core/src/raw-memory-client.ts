/**
 * Raw memory's protocol as a device runs it (docs/raw-memory.md): enrol, set up the first key with
 * a recovery code, recover on a second computer, encrypt and read records, rotate on forgetting a
 * device. Keys exist only here, in the device's memory; the server gets public keys, wraps and
 * ciphertext. Used by the desktop host and by the server's tests.
 */
import {
  RAW_MEMORY_ALG,
  RAW_MEMORY_RECOVERY,
  type RawMemoryRuntime,
  rawMemorySignerStatement,
  rawMemoryWrapStatement,
} from "./api/raw-memory";
import type { TandemClient } from "./client";
import {
  decryptRecord,
  encryptRecord,
  fromBase64,
  type KeyPair,
  newAccountKey,
  newRecoveryCode,
  newRecoveryParams,
  type RecoveryParams,
  recoveryKeyPair,
  signerOf,
  toBase64,
  unwrapAccountKey,
  wrapAccountKey,
} from "./raw-memory-crypto";

export interface RawMemoryDeviceIdentity extends KeyPair {
  readonly deviceId: string;
  readonly name?: string;
}

/** A record as `POST /raw-memory/records` takes it. */
export interface SealedRecord {
  recordId: string;
  deviceId: string;
  runtime: RawMemoryRuntime;
  sessionIdHash: string;
  createdAt: string;
  keyVersion: number;
  alg: typeof RAW_MEMORY_ALG;
  nonce: string;
  ciphertext: string;
  plaintextBytes: number;
}

/** A wrap of `key` (version `keyVersion`) for a recipient, signed by the version's signer. */
export function signedWrap(key: Uint8Array, keyVersion: number, recipient: string, recipientPublicKey: Uint8Array) {
  const wrapped = toBase64(wrapAccountKey(key, recipientPublicKey, recipient, keyVersion));
  const statement = rawMemoryWrapStatement(keyVersion, recipient, toBase64(recipientPublicKey), wrapped);
  return { keyVersion, recipient, wrapped, proof: toBase64(signerOf(key).sign(statement)) };
}

export class RawMemoryKeyError extends Error {
  override name = "RawMemoryKeyError";
}

export class RawMemoryDeviceClient {
  /** The account keys this device could open, by version. */
  #keys = new Map<number, Uint8Array>();
  #current = 0;

  constructor(
    private readonly api: TandemClient,
    readonly device: RawMemoryDeviceIdentity,
  ) {}

  get currentVersion(): number {
    return this.#current;
  }

  async enrol(): Promise<void> {
    const { deviceId, name } = this.device;
    await this.api.call("enrolRawMemoryDevice", {
      body: { deviceId, publicKey: toBase64(this.device.publicKey), ...(name ? { name } : {}) },
    });
  }

  /** The first key of the account, for this device and a new recovery code, which is returned (show it once). */
  async setUp(options: { scrypt?: RecoveryParams["scrypt"] } = {}): Promise<string> {
    const code = newRecoveryCode();
    const params = newRecoveryParams(options.scrypt);
    const recovery = await recoveryKeyPair(code, params);
    const key = newAccountKey();
    await this.api.call("putRawMemoryKeys", {
      body: {
        recovery: { publicKey: toBase64(recovery.publicKey), salt: toBase64(params.salt), scrypt: { ...params.scrypt } },
        signer: toBase64(signerOf(key).publicKey),
        wraps: [
          signedWrap(key, 1, this.device.deviceId, this.device.publicKey),
          signedWrap(key, 1, RAW_MEMORY_RECOVERY, recovery.publicKey),
        ],
      },
    });
    this.#keys = new Map([[1, key]]);
    this.#current = 1;
    return code;
  }

  /** Opens every version with the recovery code and wraps each for this device. */
  async recover(code: string): Promise<void> {
    const keys = await this.api.call("getRawMemoryKeys", { query: { recipient: RAW_MEMORY_RECOVERY } });
    if (!keys.recovery) throw new RawMemoryKeyError("raw memory is not set up on this account yet");
    const recovery = await recoveryKeyPair(code, { salt: fromBase64(keys.recovery.salt), scrypt: keys.recovery.scrypt });
    if (toBase64(recovery.publicKey) !== keys.recovery.publicKey) throw new RawMemoryKeyError("that recovery code is not this account's");
    const opened = new Map<number, Uint8Array>();
    for (const wrap of keys.wraps) {
      opened.set(wrap.keyVersion, unwrapAccountKey(fromBase64(wrap.wrapped), recovery.privateKey, RAW_MEMORY_RECOVERY, wrap.keyVersion));
    }
    await this.#wrapFor(this.device.deviceId, this.device.publicKey, opened);
    this.#keys = opened;
    this.#current = keys.currentVersion;
  }

  /** From an enrolled device: gives every version this device holds to another enrolled device. */
  async grant(deviceId: string): Promise<void> {
    await this.load();
    const { devices } = await this.api.call("listRawMemoryDevices");
    const target = devices.find((device) => device.deviceId === deviceId);
    if (!target) throw new RawMemoryKeyError(`device ${deviceId} is not enrolled`);
    await this.#wrapFor(deviceId, fromBase64(target.publicKey), this.#keys);
  }

  async #wrapFor(recipient: string, publicKey: Uint8Array, keys: ReadonlyMap<number, Uint8Array>): Promise<void> {
    const wraps = [...keys].map(([keyVersion, key]) => signedWrap(key, keyVersion, recipient, publicKey));
    if (wraps.length > 0) await this.api.call("putRawMemoryKeys", { body: { wraps } });
  }

  /** Reads and opens this device's wraps; false when it holds none (not set up, or waiting for a key). */
  async load(): Promise<boolean> {
    const keys = await this.api.call("getRawMemoryKeys", { query: { recipient: this.device.deviceId } });
    const opened = new Map<number, Uint8Array>();
    for (const wrap of keys.wraps) {
      opened.set(
        wrap.keyVersion,
        unwrapAccountKey(fromBase64(wrap.wrapped), this.device.privateKey, this.device.deviceId, wrap.keyVersion),
      );
    }
    this.#keys = opened;
    this.#current = keys.currentVersion;
    return opened.has(keys.currentVersion);
  }

  #key(version: number): Uint8Array {
    const key = this.#keys.get(version);
    if (!key) throw new RawMemoryKeyError(`this device holds no key of version ${version}`);
    return key;
  }

  /** Encrypts a (redacted) session with the current key. */
  seal(input: {
    recordId: string;
    runtime: RawMemoryRuntime;
    sessionIdHash: string;
    createdAt: string;
    plaintext: Uint8Array;
  }): SealedRecord {
    const keyVersion = this.#current;
    const binding = {
      recordId: input.recordId,
      deviceId: this.device.deviceId,
      runtime: input.runtime,
      sessionIdHash: input.sessionIdHash,
      createdAt: input.createdAt,
      keyVersion,
    };
    const { nonce, ciphertext, plaintextBytes } = encryptRecord(this.#key(keyVersion), binding, input.plaintext);
    return { ...binding, alg: RAW_MEMORY_ALG, nonce: toBase64(nonce), ciphertext: toBase64(ciphertext), plaintextBytes };
  }

  /** Stores a sealed record (again with the same content: answered as stored). */
  async upload(record: SealedRecord): Promise<void> {
    await this.api.call("postRawMemoryRecord", { body: record });
  }

  /** Fetches and decrypts a record; throws when it was altered or is not what its metadata claims. */
  async read(recordId: string): Promise<Uint8Array> {
    const { record } = await this.api.call("getRawMemoryRecord", { params: { recordId } });
    if (!this.#keys.has(record.keyVersion)) await this.load();
    return decryptRecord(
      this.#key(record.keyVersion),
      {
        recordId: record.recordId,
        deviceId: record.deviceId,
        runtime: record.runtime,
        sessionIdHash: record.sessionIdHash,
        createdAt: record.createdAt,
        keyVersion: record.keyVersion,
        plaintextBytes: record.plaintextBytes,
      },
      fromBase64(record.nonce),
      fromBase64(record.ciphertext),
    );
  }

  /**
   * Forgets a device: a new key version wrapped for the recovery code and every other device that
   * holds the current one, sent with the DELETE, so the forgotten device cannot read what comes next.
   */
  async forget(deviceId: string): Promise<{ deletedRecords: number }> {
    await this.load();
    const [{ devices }, keys] = await Promise.all([
      this.api.call("listRawMemoryDevices"),
      this.api.call("getRawMemoryKeys", { query: { recipient: RAW_MEMORY_RECOVERY } }),
    ]);
    if (!keys.recovery) {
      const answer = await this.api.call("forgetRawMemoryDevice", { params: { deviceId }, body: {} });
      return { deletedRecords: answer.deletedRecords };
    }
    const next = keys.currentVersion + 1;
    const key = newAccountKey();
    const remaining = devices.filter((device) => device.hasCurrentKey && device.deviceId !== deviceId);
    const wraps = [
      ...remaining.map((device) => signedWrap(key, next, device.deviceId, fromBase64(device.publicKey))),
      signedWrap(key, next, RAW_MEMORY_RECOVERY, fromBase64(keys.recovery.publicKey)),
    ].map(({ keyVersion: _, ...wrap }) => wrap);
    // The new version's signer, endorsed by the current one's: the server takes no rotation without it.
    const newSigner = toBase64(signerOf(key).publicKey);
    const endorsement = toBase64(signerOf(this.#key(keys.currentVersion)).sign(rawMemorySignerStatement(next, newSigner)));
    const rotation = { keyVersion: next, signer: { publicKey: newSigner, endorsement }, wraps };
    const answer = await this.api.call("forgetRawMemoryDevice", { params: { deviceId }, body: { rotation } });
    if (deviceId !== this.device.deviceId) {
      this.#keys.set(next, key);
      this.#current = next;
    } else {
      this.#keys = new Map();
      this.#current = 0;
    }
    return { deletedRecords: answer.deletedRecords };
  }
}
