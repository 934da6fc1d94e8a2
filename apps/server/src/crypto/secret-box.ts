import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Encrypts what the server must keep but must never store in the clear: third-party tokens (remote
 * tool servers' OAuth tokens), its own signing keys. AES-256-GCM with a fresh IV per value; the
 * `purpose` is bound as associated data so a sealed value can't be moved into another column and
 * opened there.
 *
 * The key is the operator's `TANDEM_SECRET_KEY` when set (required when several instances share one
 * PostgreSQL database), else a random key created once in the data directory (mode 0600). Either
 * way it never sits in the database, so a database dump alone reveals no secret.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static fromSecret(secret: string): SecretBox {
    if (secret.length < 16) throw new Error("TANDEM_SECRET_KEY must be at least 16 characters");
    const key = Buffer.from(hkdfSync("sha256", secret, "tandem", "tandem secret box v1", 32));
    return new SecretBox(key);
  }

  /** The operator's secret, else the data directory's key file, created on first use. */
  static async load(options: { secretKey?: string; dataDir: string }): Promise<SecretBox> {
    if (options.secretKey) return SecretBox.fromSecret(options.secretKey);
    const file = path.resolve(options.dataDir, "secret.key");
    let secret: string;
    try {
      secret = (await readFile(file, "utf8")).trim();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      await mkdir(options.dataDir, { recursive: true });
      secret = randomBytes(32).toString("base64url");
      // `wx`: two processes starting at once can't overwrite each other's key; the loser reads it.
      try {
        await writeFile(file, `${secret}\n`, { mode: 0o600, flag: "wx" });
      } catch (writeError) {
        if ((writeError as NodeJS.ErrnoException).code !== "EEXIST") throw writeError;
        secret = (await readFile(file, "utf8")).trim();
      }
      await chmod(file, 0o600).catch(() => {});
    }
    return SecretBox.fromSecret(secret);
  }

  /**
   * A keyed MAC of `value` (HMAC-SHA256, base64url) under a key of its own derived for `purpose`:
   * proof that this server made it, for tokens it must check later without storing them.
   */
  mac(value: string, purpose: string): string {
    const key = Buffer.from(hkdfSync("sha256", this.key, "", `tandem mac v1:${purpose}`, 32));
    return createHmac("sha256", key).update(value, "utf8").digest("base64url");
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  seal(plaintext: string, purpose: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(purpose, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return ["v1", iv, cipher.getAuthTag(), body].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
  }

  /** The plaintext; throws when the value was altered, sealed for another purpose or with another key. */
  open(sealed: string, purpose: string): string {
    const [version, iv, tag, body] = sealed.split(".");
    if (version !== "v1" || iv === undefined || tag === undefined || body === undefined) throw new Error("not a sealed value");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(purpose, "utf8"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
  }
}
