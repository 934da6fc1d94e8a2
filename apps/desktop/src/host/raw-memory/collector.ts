import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { RAW_MEMORY_MAX_CIPHERTEXT_BYTES, RAW_MEMORY_TAG_BYTES, type RawMemoryRuntime, redactJsonl, TandemApiError } from "@tandem/core";
import { RawMemoryDeviceClient, RawMemoryKeyError, type SealedRecord } from "@tandem/core/raw-memory-client";
import { fromBase64, newKeyPair, publicKeyOf, sessionIdHash, toBase64 } from "@tandem/core/raw-memory-crypto";
import type { RawMemoryHit, RawMemoryStatus } from "../../shared/desktop-api";
import type { HostContext } from "../host-context";
import { HostRefusal } from "../host-refusal";
import { accountKey } from "../replication/sync";
import type { RawMemoryOptions } from "./raw-memory-options";
import { defaultRoots, findSessions, type SessionRoots } from "./session-files";

type SessionState =
  | { status: "queued"; recordId: string; runtime: RawMemoryRuntime; file: string; sessionId: string; bytes: number; at: number }
  | { status: "uploaded"; recordId: string; runtime: RawMemoryRuntime; bytes: number; at: number }
  | { status: "refused"; runtime: RawMemoryRuntime; reason: string; at: number };

interface AccountState {
  deviceId: string;
  enabled: boolean;
  /** Sessions finished before this moment are not captured. */
  enabledAt: number;
  /** By the hash of the session's id: every session is captured at most once. */
  sessions: Record<string, SessionState>;
}

const MAX_PLAINTEXT = RAW_MEMORY_MAX_CIPHERTEXT_BYTES - RAW_MEMORY_TAG_BYTES;
const MAX_BACKOFF_MS = 10 * 60_000;
const CLOCK_SLACK_MS = 5_000;
/** Decrypted sessions kept in memory for search, at most (by their size). */
const SEARCH_CACHE_BYTES = 64 * 1024 * 1024;

const settingKey = (account: string) => `raw-memory:${account}`;
const secretKey = (account: string) => `raw-memory-device:${account}`;

/**
 * The raw memory collector (docs/raw-memory.md): opt-in, per signed-in account. It looks at the
 * agents' session folders on a slow timer (no busy loop: one directory listing per poll), takes a
 * session once it has been quiet for `quietMs`, redacts it (a session that cannot be redacted is
 * refused, never sent), encrypts it on this computer and uploads it. The queue is files on disk
 * written before any upload, so a restart loses nothing and sends nothing twice: each session is
 * recorded by its hash before its record is made, and a record keeps its id through every retry.
 */
export class RawMemoryCollector {
  readonly #roots: SessionRoots;
  readonly #pollMs: number;
  readonly #quietMs: number;
  readonly #queueDir: string;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #retryAt = 0;
  #failures = 0;
  #lastError: string | null = null;
  /** The recovery code between turning on and "I saved it": in memory only, shown once. */
  #pendingCode: { account: string; code: string } | null = null;
  #client: { account: string; client: RawMemoryDeviceClient } | null = null;
  readonly #plain = new Map<string, string>();
  #plainBytes = 0;
  #closed = false;

  constructor(
    private readonly context: HostContext,
    private readonly options: RawMemoryOptions = {},
  ) {
    this.#roots = { ...defaultRoots(), ...options.roots };
    this.#pollMs = options.pollMs ?? 30_000;
    this.#quietMs = options.quietMs ?? 10 * 60_000;
    this.#queueDir = path.join(context.config.dataDir, "raw-memory", "queue");
  }

  start(): void {
    this.context.session.onChange(() => {
      this.#client = null;
      this.#pendingCode = null;
      this.#plain.clear();
      this.#plainBytes = 0;
      this.#schedule(0);
    });
    this.#schedule(0);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.tick(), ms);
    this.#timer.unref();
  }

  /**
   * One look at the folders and the queue (the timer's work; tests call it to not wait), after the
   * one under way if any: passes never overlap, and a pass asked for sees what changed before it.
   */
  tick(): Promise<void> {
    const pass = (this.#running ?? Promise.resolve()).then(() => this.#tick());
    const running = pass.finally(() => {
      if (this.#running === running) {
        this.#running = undefined;
        this.#schedule(this.#pollMs);
      }
    });
    this.#running = running;
    return running;
  }

  async #tick(): Promise<void> {
    const account = this.#account();
    if (!account) return;
    const state = await this.#state(account);
    if (!state?.enabled) return;
    try {
      const client = await this.#deviceClient(account, state);
      if (!client) return;
      await this.#capture(account, state, client);
      if (Date.now() >= this.#retryAt) await this.#flush(account, state, client);
      this.#lastError = null;
    } catch (error) {
      this.#lastError = error instanceof Error ? error.message : String(error);
    }
  }

  #account(): string | null {
    const credentials = this.context.session.credentials();
    return credentials ? accountKey(credentials.serverUrl, credentials.userId) : null;
  }

  #api() {
    const client = this.context.session.client();
    if (!client) throw new HostRefusal("Sign in first", 409);
    return client;
  }

  async #state(account: string): Promise<AccountState | null> {
    const stored = await this.context.store.getSetting(settingKey(account));
    return stored ? (JSON.parse(stored) as AccountState) : null;
  }

  async #save(account: string, state: AccountState): Promise<void> {
    await this.context.store.setSetting(settingKey(account), JSON.stringify(state));
  }

  /** This computer's device for the account: its id in the settings, its private key with the other secrets. */
  async #identity(account: string, state: AccountState | null): Promise<{ deviceId: string; privateKey: Uint8Array; created: boolean }> {
    const stored = await this.context.config.secrets.get(secretKey(account));
    if (stored && state) return { deviceId: state.deviceId, privateKey: fromBase64(stored), created: false };
    const { privateKey } = newKeyPair();
    await this.context.config.secrets.set(secretKey(account), toBase64(privateKey));
    return { deviceId: randomUUID(), privateKey, created: true };
  }

  /** This computer as a raw memory device of the signed-in account, named after the machine. */
  #clientFor(deviceId: string, privateKey: Uint8Array): RawMemoryDeviceClient {
    return new RawMemoryDeviceClient(this.#api(), { deviceId, name: hostname(), privateKey, publicKey: publicKeyOf(privateKey) });
  }

  async #deviceClient(account: string, state: AccountState): Promise<RawMemoryDeviceClient | null> {
    if (this.#client?.account === account) return this.#client.client;
    const stored = await this.context.config.secrets.get(secretKey(account));
    if (!stored) return null;
    const privateKey = fromBase64(stored);
    const client = this.#clientFor(state.deviceId, privateKey);
    if (!(await client.load())) return null;
    this.#client = { account, client };
    return client;
  }

  async #capture(account: string, state: AccountState, client: RawMemoryDeviceClient): Promise<void> {
    const now = Date.now();
    for (const session of await findSessions(this.#roots)) {
      if (this.#closed) return;
      // Finished only once quiet; captured only if it changed since raw memory was turned on.
      // (A few seconds of slack: file times tick more coarsely than the clock.)
      if (session.modifiedMs < state.enabledAt - CLOCK_SLACK_MS || now - session.modifiedMs < this.#quietMs) continue;
      const hash = sessionIdHash(session.runtime, session.sessionId);
      if (state.sessions[hash]) continue;
      const recordId = randomUUID();
      // Recorded before its record exists: whatever happens next, this session is never taken again.
      state.sessions[hash] = {
        status: "queued",
        recordId,
        runtime: session.runtime,
        file: session.file,
        sessionId: session.sessionId,
        bytes: session.bytes,
        at: now,
      };
      await this.#save(account, state);
      await this.#seal(account, state, hash, client);
    }
  }

  /** Reads, redacts and encrypts a queued session into its queue file; refuses it (for good) when it cannot be redacted. */
  async #seal(account: string, state: AccountState, hash: string, client: RawMemoryDeviceClient): Promise<SealedRecord | null> {
    const entry = state.sessions[hash];
    if (entry?.status !== "queued") return null;
    const refuse = async (reason: string) => {
      state.sessions[hash] = { status: "refused", runtime: entry.runtime, reason, at: Date.now() };
      await this.#save(account, state);
      return null;
    };
    let text: string;
    try {
      text = await readFile(entry.file, "utf8");
    } catch {
      return refuse("the session file could not be read");
    }
    const redacted = redactJsonl(text);
    if (!redacted.ok) return refuse(`not uploaded: ${redacted.reason}`);
    const plaintext = new TextEncoder().encode(redacted.text);
    if (plaintext.length > MAX_PLAINTEXT) return refuse("not uploaded: larger than 10 MB");
    const record = client.seal({
      recordId: entry.recordId,
      runtime: entry.runtime,
      sessionIdHash: hash,
      createdAt: new Date(entry.at).toISOString(),
      plaintext,
    });
    await mkdir(this.#queueDir, { recursive: true });
    const file = this.#queueFile(entry.recordId);
    await writeFile(`${file}.tmp`, JSON.stringify(record), { mode: 0o600 });
    await rename(`${file}.tmp`, file);
    return record;
  }

  #queueFile(recordId: string): string {
    return path.join(this.#queueDir, `${recordId}.json`);
  }

  async #flush(account: string, state: AccountState, client: RawMemoryDeviceClient): Promise<void> {
    for (const [hash, entry] of Object.entries(state.sessions)) {
      if (this.#closed || entry.status !== "queued") continue;
      let record: SealedRecord | null;
      try {
        record = JSON.parse(await readFile(this.#queueFile(entry.recordId), "utf8")) as SealedRecord;
      } catch {
        // Recorded but never sealed (the app stopped in between): seal it now, with the same record id.
        record = await this.#seal(account, state, hash, client);
      }
      if (!record) continue;
      try {
        await client.upload(record);
      } catch (error) {
        if (error instanceof TandemApiError && error.body.error === "stale_key_version") {
          // The key rotated meanwhile: the server never stored this record, so it is sealed again with the new key.
          await client.load();
          await rm(this.#queueFile(entry.recordId), { force: true });
          continue;
        }
        if (error instanceof TandemApiError && error.status >= 400 && error.status < 500 && ![408, 413, 429].includes(error.status)) {
          if (error.body.error !== "record_conflict") {
            state.sessions[hash] = {
              status: "refused",
              runtime: entry.runtime,
              reason: `the server refused it: ${error.message}`,
              at: Date.now(),
            };
            await this.#save(account, state);
            await rm(this.#queueFile(entry.recordId), { force: true });
            continue;
          }
        } else {
          // Offline, the server failing, a flood or the quota: tried again later, ever more slowly.
          this.#failures++;
          this.#retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.#failures);
          throw error;
        }
      }
      this.#failures = 0;
      state.sessions[hash] = {
        status: "uploaded",
        recordId: entry.recordId,
        runtime: entry.runtime,
        bytes: record.plaintextBytes,
        at: Date.now(),
      };
      await this.#save(account, state);
      await rm(this.#queueFile(entry.recordId), { force: true });
    }
  }

  // ——— What the page asks ———

  async status(): Promise<RawMemoryStatus> {
    const account = this.#account();
    const base: RawMemoryStatus = {
      state: "signed-out",
      deviceId: null,
      devices: [],
      captured: [],
      queued: 0,
      refused: [],
      roots: this.#roots,
      error: null,
    };
    if (!account) return base;
    const state = await this.#state(account);
    if (this.#pendingCode?.account === account) return { ...base, state: "confirm-recovery", deviceId: state?.deviceId ?? null };
    if (!state?.enabled)
      return { ...base, state: state && (await this.#needsRecovery(state)) ? "needs-recovery" : "off", deviceId: state?.deviceId ?? null };
    const entries = Object.values(state.sessions);
    const view: RawMemoryStatus = {
      ...base,
      state: "on",
      deviceId: state.deviceId,
      queued: entries.filter((entry) => entry.status === "queued").length,
      refused: entries.flatMap((entry) =>
        entry.status === "refused" ? [{ runtime: entry.runtime, reason: entry.reason, at: new Date(entry.at).toISOString() }] : [],
      ),
      error: this.#lastError,
    };
    try {
      const api = this.#api();
      const { devices } = await api.call("listRawMemoryDevices");
      const names = new Map(devices.map((device) => [device.deviceId, device.name]));
      const records = await this.#allRecords();
      return {
        ...view,
        devices: devices.map((device) => ({
          deviceId: device.deviceId,
          name: device.name || "Unnamed computer",
          thisDevice: device.deviceId === state.deviceId,
          hasCurrentKey: device.hasCurrentKey,
          records: device.records,
          bytes: device.bytes,
          enrolledAt: device.enrolledAt,
        })),
        captured: records
          .map((record) => ({
            recordId: record.recordId,
            runtime: record.runtime,
            deviceName: names.get(record.deviceId) || "Unnamed computer",
            createdAt: record.createdAt,
            bytes: record.plaintextBytes,
          }))
          .reverse(),
      };
    } catch (error) {
      return { ...view, error: error instanceof Error ? error.message : String(error) };
    }
  }

  async #allRecords() {
    const api = this.#api();
    const records = [];
    let after: string | undefined;
    do {
      const page = await api.call("listRawMemoryRecords", { query: { limit: 500, ...(after ? { after } : {}) } });
      records.push(...page.records);
      after = page.nextAfter ?? undefined;
    } while (after);
    return records;
  }

  async #needsRecovery(state: AccountState): Promise<boolean> {
    try {
      const keys = await this.#api().call("getRawMemoryKeys", { query: { recipient: state.deviceId } });
      return keys.currentVersion > 0 && !keys.wraps.some((wrap) => wrap.keyVersion === keys.currentVersion);
    } catch {
      return false;
    }
  }

  /**
   * Turns raw memory on for this computer: enrols it and, on an account without a key yet, makes the
   * first key and a recovery code (answered here once; capture starts after {@link confirmSaved}).
   * On an account that has a key, this computer needs the recovery code (or another computer's grant).
   */
  async enable(): Promise<{ recoveryCode: string | null; needsRecovery: boolean }> {
    const account = this.#account();
    if (!account) throw new HostRefusal("Sign in first", 409);
    const api = this.#api();
    const state = await this.#state(account);
    const identity = await this.#identity(account, state);
    const next: AccountState =
      state && !identity.created ? state : { deviceId: identity.deviceId, enabled: false, enabledAt: Date.now(), sessions: {} };
    const client = this.#clientFor(next.deviceId, identity.privateKey);
    await client.enrol();
    await this.#save(account, next);
    const keys = await api.call("getRawMemoryKeys", { query: { recipient: next.deviceId } });
    if (keys.currentVersion === 0) {
      const recoveryCode = await client.setUp(this.options.scrypt ? { scrypt: this.options.scrypt } : {});
      this.#pendingCode = { account, code: recoveryCode };
      this.#client = null;
      return { recoveryCode, needsRecovery: false };
    }
    if (!(await client.load())) return { recoveryCode: null, needsRecovery: true };
    await this.#turnOn(account, next);
    return { recoveryCode: null, needsRecovery: false };
  }

  async #turnOn(account: string, state: AccountState): Promise<void> {
    this.#pendingCode = null;
    if (!state.enabled) state.enabledAt = Date.now();
    state.enabled = true;
    await this.#save(account, state);
    this.#client = null;
    this.#schedule(0);
  }

  /** "I saved the recovery code": the code is forgotten here and capture starts. */
  async confirmSaved(): Promise<void> {
    const account = this.#account();
    const state = account ? await this.#state(account) : null;
    if (!account || !state || this.#pendingCode?.account !== account) throw new HostRefusal("There is no recovery code waiting", 409);
    this.#pendingCode = null;
    await this.#turnOn(account, state);
  }

  /** A second computer: opens the account's keys with the recovery code, then turns capture on. */
  async recover(code: string): Promise<void> {
    const account = this.#account();
    const state = account ? await this.#state(account) : null;
    if (!account || !state) throw new HostRefusal("Turn raw memory on first", 409);
    const stored = await this.context.config.secrets.get(secretKey(account));
    if (!stored) throw new HostRefusal("Turn raw memory on first", 409);
    const privateKey = fromBase64(stored);
    const client = this.#clientFor(state.deviceId, privateKey);
    try {
      await client.recover(code);
    } catch (error) {
      if (error instanceof RawMemoryKeyError) throw new HostRefusal(error.message, 422);
      throw error;
    }
    await this.#turnOn(account, state);
  }

  /** Stops capturing on this computer; what was captured stays (forget the device to delete it). */
  async disable(): Promise<void> {
    const account = this.#account();
    const state = account ? await this.#state(account) : null;
    if (!account || !state) return;
    state.enabled = false;
    await this.#save(account, state);
  }

  /** Forgets a device (its records and keys go; the account key rotates, made here). */
  async forget(deviceId: string): Promise<{ deletedRecords: number }> {
    const account = this.#account();
    const state = account ? await this.#state(account) : null;
    const client = account && state ? await this.#deviceClient(account, state) : null;
    if (!account || !state || !client)
      throw new HostRefusal("Turn raw memory on here first: forgetting a device rotates the key, which this computer must hold", 409);
    const result = await client.forget(deviceId);
    if (deviceId === state.deviceId) {
      await this.context.store.setSetting(settingKey(account), null);
      await this.context.config.secrets.delete(secretKey(account));
      this.#client = null;
    }
    return result;
  }

  /** Searches the captured sessions, decrypted here (never on the server). */
  async search(query: string): Promise<RawMemoryHit[]> {
    const account = this.#account();
    const state = account ? await this.#state(account) : null;
    const client = account && state ? await this.#deviceClient(account, state) : null;
    if (!client) throw new HostRefusal("Turn raw memory on first", 409);
    const needle = query.toLowerCase();
    const hits: RawMemoryHit[] = [];
    for (const record of (await this.#allRecords()).reverse()) {
      let text = this.#plain.get(record.recordId);
      if (text === undefined) {
        try {
          text = new TextDecoder().decode(await client.read(record.recordId));
        } catch {
          continue;
        }
        this.#remember(record.recordId, text);
      }
      const at = text.toLowerCase().indexOf(needle);
      if (at < 0) continue;
      hits.push({
        recordId: record.recordId,
        runtime: record.runtime,
        createdAt: record.createdAt,
        snippet: snippetOf(text, at, needle.length),
      });
      if (hits.length >= 50) break;
    }
    return hits;
  }

  #remember(recordId: string, text: string): void {
    this.#plain.set(recordId, text);
    this.#plainBytes += text.length;
    for (const [id, cached] of this.#plain) {
      if (this.#plainBytes <= SEARCH_CACHE_BYTES) break;
      this.#plain.delete(id);
      this.#plainBytes -= cached.length;
    }
  }
}

/** The words around a match, on one line. */
function snippetOf(text: string, at: number, length: number): string {
  const start = Math.max(0, at - 80);
  const end = Math.min(text.length, at + length + 80);
  return `${start > 0 ? "…" : ""}${text.slice(start, end).replace(/\\n|\s+/g, " ")}${end < text.length ? "…" : ""}`;
}
