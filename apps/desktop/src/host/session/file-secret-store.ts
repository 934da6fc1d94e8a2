import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SecretStore } from "../host-context";

/**
 * Web mode's secret store: one JSON file readable by this user only (0600), replaced atomically.
 * Electron uses safeStorage instead (src/main); both sit behind {@link SecretStore}.
 */
export class FileSecretStore implements SecretStore {
  readonly #file: string;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string) {
    this.#file = path.join(dataDir, "secrets.json");
  }

  async get(name: string): Promise<string | null> {
    return (await this.#read())[name] ?? null;
  }

  set(name: string, value: string): Promise<void> {
    return this.#update((secrets) => {
      secrets[name] = value;
    });
  }

  delete(name: string): Promise<void> {
    return this.#update((secrets) => {
      delete secrets[name];
    });
  }

  async #read(): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(this.#file, "utf8")) as Record<string, string>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
  }

  /** Writes are queued so two updates never interleave their read and write. */
  #update(change: (secrets: Record<string, string>) => void): Promise<void> {
    const next = this.#queue.then(async () => {
      const secrets = await this.#read();
      change(secrets);
      await mkdir(path.dirname(this.#file), { recursive: true, mode: 0o700 });
      const temporary = `${this.#file}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(secrets), { mode: 0o600 });
      await chmod(temporary, 0o600);
      await rename(temporary, this.#file);
    });
    this.#queue = next.catch(() => {});
    return next;
  }
}
