import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileSecretStore } from "../host/session/file-secret-store";
import { openMainSecretStore, type SafeStorage, SafeStorageSecretStore } from "./safe-storage-secret-store";

/**
 * Electron's safeStorage cannot run here, so a reversible stand-in cipher plays the keychain. What
 * is under test is everything around it: what reaches the disk, with which mode, and the fallback.
 */
function fakeSafeStorage(options: { available?: boolean; backend?: string; key?: number } = {}): SafeStorage {
  const key = options.key ?? 0x5a;
  const xor = (bytes: Buffer) => Buffer.from(bytes.map((byte) => byte ^ key));
  return {
    isEncryptionAvailable: () => options.available ?? true,
    getSelectedStorageBackend: () => options.backend ?? "gnome_libsecret",
    encryptString: (plain) => Buffer.concat([Buffer.from("v10"), xor(Buffer.from(plain, "utf8"))]),
    decryptString: (encrypted) => {
      if (encrypted.subarray(0, 3).toString() !== "v10") throw new Error("bad ciphertext");
      const plain = xor(encrypted.subarray(3)).toString("utf8");
      if (!/^[\x20-\x7e]*$/.test(plain)) throw new Error("wrong key");
      return plain;
    },
  };
}

const SECRET = "svc_sk_secret_value_123";

describe("Electron's secret store", () => {
  let dataDir: string;
  const warnings: string[] = [];

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "tandem-secrets-"));
    warnings.length = 0;
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const open = (safeStorage: SafeStorage, platform: NodeJS.Platform = "linux") =>
    openMainSecretStore(safeStorage, dataDir, platform, (message) => warnings.push(message));

  it("keeps secrets encrypted, base64, in a 0600 file, and reads them back", async () => {
    const { store, encrypted } = open(fakeSafeStorage());
    expect(encrypted).toBe(true);
    await store.set("apiKey", SECRET);
    expect(await store.get("apiKey")).toBe(SECRET);

    const file = path.join(dataDir, "safe-storage", "secrets.json");
    const onDisk = await readFile(file, "utf8");
    expect(onDisk).not.toContain(SECRET);
    expect(Buffer.from(JSON.parse(onDisk).apiKey, "base64").subarray(0, 3).toString()).toBe("v10");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(warnings).toEqual([]);

    await store.delete("apiKey");
    expect(await store.get("apiKey")).toBeNull();
  });

  it("treats a secret the keychain can no longer decrypt as absent, and says so without the secret", async () => {
    await open(fakeSafeStorage({ key: 0x5a })).store.set("deviceToken", SECRET);
    const other = open(fakeSafeStorage({ key: 0x33 }));
    expect(await other.store.get("deviceToken")).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("sign in again");
    expect(warnings[0]).not.toContain(SECRET);
  });

  it("without a keychain, falls back to the 0600 plain file and warns", async () => {
    for (const safeStorage of [fakeSafeStorage({ available: false }), fakeSafeStorage({ backend: "basic_text" })]) {
      warnings.length = 0;
      const { store, encrypted } = open(safeStorage);
      expect(encrypted).toBe(false);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain("unencrypted");
      await store.set("apiKey", SECRET);
      const file = path.join(dataDir, "secrets.json");
      expect(JSON.parse(await readFile(file, "utf8")).apiKey).toBe(SECRET);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    }
  });

  it("only Linux has a basic_text backend to distrust", () => {
    expect(open(fakeSafeStorage({ backend: "basic_text" }), "darwin").encrypted).toBe(true);
  });

  it("moves a secret from the plain fallback file into the keychain once one is available", async () => {
    await new FileSecretStore(dataDir).set("apiKey", SECRET);
    const { store } = open(fakeSafeStorage());
    expect(await store.get("apiKey")).toBe(SECRET);
    expect(await new FileSecretStore(dataDir).get("apiKey")).toBeNull();
    expect(await new FileSecretStore(path.join(dataDir, "safe-storage")).get("apiKey")).not.toBe(SECRET);
    expect(await store.get("apiKey")).toBe(SECRET);
  });

  it("encrypts through the cipher it is given", async () => {
    const store = new SafeStorageSecretStore(fakeSafeStorage(), new FileSecretStore(dataDir));
    await store.set("x", "value");
    expect(await new FileSecretStore(dataDir).get("x")).not.toBe("value");
    expect(await store.get("x")).toBe("value");
  });
});
