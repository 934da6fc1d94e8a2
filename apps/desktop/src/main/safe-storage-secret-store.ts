import path from "node:path";
import type { SecretStore } from "../host/host-context";
import { FileSecretStore } from "../host/session/file-secret-store";

/** The part of Electron's `safeStorage` this store uses; an interface so tests use a stand-in. */
export interface StringCipher {
  encryptString(plainText: string): Buffer;
  decryptString(encrypted: Buffer): string;
}

export interface SafeStorage extends StringCipher {
  isEncryptionAvailable(): boolean;
  /** Linux only: which keyring backs the key (`basic_text` means none: a key hard-coded in Chromium). */
  getSelectedStorageBackend?(): string;
}

/**
 * Secrets encrypted with the OS keychain through Electron's `safeStorage` (Keychain on macOS,
 * DPAPI on Windows, libsecret or KWallet on Linux). The ciphertexts, base64, are kept by
 * `ciphertexts` (a 0600 file), so the file alone reveals nothing without the user's keychain.
 */
export class SafeStorageSecretStore implements SecretStore {
  readonly #cipher: StringCipher;
  readonly #ciphertexts: SecretStore;
  readonly #warn: (message: string) => void;

  constructor(cipher: StringCipher, ciphertexts: SecretStore, warn: (message: string) => void = () => {}) {
    this.#cipher = cipher;
    this.#ciphertexts = ciphertexts;
    this.#warn = warn;
  }

  async get(name: string): Promise<string | null> {
    const stored = await this.#ciphertexts.get(name);
    if (stored === null) return null;
    try {
      return this.#cipher.decryptString(Buffer.from(stored, "base64"));
    } catch {
      // The keychain's key changed (another OS account, a reset keyring): the secret is lost for
      // good, so the app behaves as if it had none and the owner signs in or pairs again.
      this.#warn(`The stored secret "${name}" cannot be decrypted with this keychain; sign in again.`);
      return null;
    }
  }

  async set(name: string, value: string): Promise<void> {
    await this.#ciphertexts.set(name, this.#cipher.encryptString(value).toString("base64"));
  }

  delete(name: string): Promise<void> {
    return this.#ciphertexts.delete(name);
  }
}

/**
 * Reads through to an older store once per secret and moves what it finds into `primary`, so a
 * secret kept in the plain fallback file (a launch without a keychain) is encrypted and removed
 * from that file as soon as a keychain is available.
 */
export class MigratingSecretStore implements SecretStore {
  readonly #primary: SecretStore;
  readonly #legacy: SecretStore;

  constructor(primary: SecretStore, legacy: SecretStore) {
    this.#primary = primary;
    this.#legacy = legacy;
  }

  async get(name: string): Promise<string | null> {
    const value = await this.#primary.get(name);
    if (value !== null) return value;
    const legacy = await this.#legacy.get(name);
    if (legacy === null) return null;
    await this.#primary.set(name, legacy);
    await this.#legacy.delete(name);
    return legacy;
  }

  async set(name: string, value: string): Promise<void> {
    await this.#primary.set(name, value);
    await this.#legacy.delete(name);
  }

  async delete(name: string): Promise<void> {
    await this.#primary.delete(name);
    await this.#legacy.delete(name);
  }
}

export interface MainSecretStore {
  readonly store: SecretStore;
  /** False when no keychain was available and secrets sit in a 0600 file, as in web mode. */
  readonly encrypted: boolean;
}

/**
 * Electron's secret store. With a keychain: encrypted, in `<dataDir>/safe-storage/secrets.json`.
 * Without one (a Linux session with no libsecret or KWallet, where `safeStorage` would fall back to
 * a key hard-coded in Chromium, or no encryption at all) the app still works, like web mode, with
 * the secrets in the 0600 file `<dataDir>/secrets.json`, and says so: refusing would lock those
 * users out, and obfuscating with a public key would only pretend to protect them.
 */
export function openMainSecretStore(
  safeStorage: SafeStorage,
  dataDir: string,
  platform: NodeJS.Platform,
  warn: (message: string) => void,
): MainSecretStore {
  const plainFile = new FileSecretStore(dataDir);
  const backend = platform === "linux" ? safeStorage.getSelectedStorageBackend?.() : undefined;
  if (safeStorage.isEncryptionAvailable() && backend !== "basic_text") {
    const encrypted = new SafeStorageSecretStore(safeStorage, new FileSecretStore(path.join(dataDir, "safe-storage")), warn);
    return { store: new MigratingSecretStore(encrypted, plainFile), encrypted: true };
  }
  warn(
    `No OS keychain is available${backend ? ` (safeStorage backend: ${backend})` : ""}: the API key and device token are kept ` +
      `unencrypted in ${path.join(dataDir, "secrets.json")}, readable by this OS user only (mode 0600). ` +
      "Install and unlock a keyring (GNOME Keyring or KWallet) to encrypt them.",
  );
  return { store: plainFile, encrypted: false };
}
