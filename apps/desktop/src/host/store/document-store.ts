import type { Kysely } from "kysely";
import * as Y from "yjs";
import type { LocalDocumentsTable, LocalSchema } from "./local-schema";

interface PendingWrite {
  /** The whole state, replacing the stored one. */
  state?: Uint8Array;
  /** Updates merged into the state (stored or `state`): what replication brought for a note not open here. */
  merges: Uint8Array[];
  /** Undefined: unchanged (0 for a new row). */
  unsynced?: boolean;
  waiters: { resolve(): void; reject(error: unknown): void }[];
}

/** A document as stored: its whole state, and whether it holds changes the server has not confirmed. */
export interface StoredDocument {
  readonly state: Uint8Array;
  readonly unsynced: boolean;
}

/** Names per query when loading many documents (well under SQLite's limit on parameters). */
const LOAD_CHUNK = 500;

/** Rows per insert statement (5 parameters each, well under SQLite's limit). */
const WRITE_CHUNK = 500;

/** How long writes gather before they go to disk together. */
const BATCH_WINDOW_MS = 20;

/**
 * One account's Yjs documents at rest: a row per document with its whole state as one update,
 * and whether it holds changes the server has not confirmed.
 *
 * Writes are gathered for a few milliseconds and committed in one transaction: the first
 * replication stores hundreds of documents at once, and one fsync for all of them instead of one
 * each is the difference between seconds and a minute. A write answers once it is on disk.
 */
export class LocalDocumentStore {
  readonly #pending = new Map<string, PendingWrite>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Kysely<LocalSchema>,
    /** `<server origin>#<userId>`; see LocalDocumentsTable.account. */
    readonly account: string,
  ) {}

  async load(name: string): Promise<StoredDocument | undefined> {
    const row = await this.db
      .selectFrom("documents")
      .select(["state", "unsynced"])
      .where("account", "=", this.account)
      .where("name", "=", name)
      .executeTakeFirst();
    return row ? { state: new Uint8Array(row.state), unsynced: row.unsynced === 1 } : undefined;
  }

  /** Many documents in a few queries (opening thousands one query each would hold up every other query). */
  async loadMany(names: readonly string[]): Promise<Map<string, StoredDocument>> {
    const found = new Map<string, StoredDocument>();
    for (let start = 0; start < names.length; start += LOAD_CHUNK) {
      const rows = await this.db
        .selectFrom("documents")
        .select(["name", "state", "unsynced"])
        .where("account", "=", this.account)
        .where("name", "in", names.slice(start, start + LOAD_CHUNK))
        .execute();
      for (const row of rows) found.set(row.name, { state: new Uint8Array(row.state), unsynced: row.unsynced === 1 });
    }
    return found;
  }

  /** The stored document in a fresh Y.Doc, or undefined when there is no local copy. */
  async loadDoc(name: string): Promise<Y.Doc | undefined> {
    const stored = await this.load(name);
    if (!stored) return undefined;
    const doc = new Y.Doc();
    Y.applyUpdate(doc, stored.state);
    return doc;
  }

  /** The stored states of `names` that have a row, read in a few queries within `trx`. */
  async #loadStates(trx: Kysely<LocalSchema>, names: readonly string[]): Promise<Map<string, Uint8Array>> {
    const states = new Map<string, Uint8Array>();
    for (let start = 0; start < names.length; start += LOAD_CHUNK) {
      const rows = await trx
        .selectFrom("documents")
        .select(["name", "state"])
        .where("account", "=", this.account)
        .where("name", "in", names.slice(start, start + LOAD_CHUNK))
        .execute();
      for (const row of rows) states.set(row.name, new Uint8Array(row.state));
    }
    return states;
  }

  /** Names of every document of this account that holds unconfirmed changes. */
  async unsyncedNames(): Promise<string[]> {
    const rows = await this.db
      .selectFrom("documents")
      .select("name")
      .where("account", "=", this.account)
      .where("unsynced", "=", 1)
      .execute();
    return rows.map((row) => row.name);
  }

  /** Names of every note document of this account with a copy here. */
  async noteNames(): Promise<string[]> {
    const rows = await this.db
      .selectFrom("documents")
      .select("name")
      .where("account", "=", this.account)
      .where("name", ">=", "note:")
      .where("name", "<", "note;")
      .execute();
    return rows.map((row) => row.name);
  }

  /** Stores the document's whole state and its unsynced flag. */
  save(name: string, doc: Y.Doc, unsynced: boolean): Promise<void> {
    return this.#enqueue(name, { state: Y.encodeStateAsUpdate(doc), unsynced });
  }

  /** Records that the server has confirmed everything in the stored state (or marks it unconfirmed again). */
  setUnsynced(name: string, unsynced: boolean): Promise<void> {
    return this.#enqueue(name, { unsynced });
  }

  /**
   * Merges an update into the stored state (a new row when there is none) without loading the
   * document, leaving its unsynced flag as it is. Yjs updates merge in any order and any number of
   * times, so this is safe beside whole-state writes of the same document.
   */
  merge(name: string, update: Uint8Array): Promise<void> {
    return this.#enqueue(name, { merge: update });
  }

  /** Writes whatever is waiting now. */
  async flush(): Promise<void> {
    this.#scheduleNow();
    await this.#flushing;
  }

  #enqueue(name: string, write: { state?: Uint8Array; merge?: Uint8Array; unsynced?: boolean }): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let pending = this.#pending.get(name);
      if (!pending) {
        pending = { merges: [], waiters: [] };
        this.#pending.set(name, pending);
      }
      // The latest state and flag win, with every merge still applied on top (a state taken before
      // a merge may lack it; merging twice changes nothing); a flag-only write keeps the state queued.
      if (write.state) pending.state = write.state;
      if (write.merge) pending.merges.push(write.merge);
      if (write.unsynced !== undefined) pending.unsynced = write.unsynced;
      pending.waiters.push({ resolve, reject });
      this.#timer ??= setTimeout(() => this.#scheduleNow(), BATCH_WINDOW_MS);
    });
  }

  #scheduleNow(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.size === 0) return;
    const batch = new Map(this.#pending);
    this.#pending.clear();
    this.#flushing = this.#flushing.then(() => this.#write(batch));
  }

  async #write(batch: Map<string, PendingWrite>): Promise<void> {
    const now = new Date().toISOString();
    try {
      await this.db.transaction().execute(async (trx) => {
        // A first replication writes hundreds of documents per batch: a few statements for all of
        // them, not one or two each (every statement is a round trip to SQLite's thread).
        const mergedOnly = [...batch].filter(([, write]) => write.merges.length > 0 && !write.state).map(([name]) => name);
        const bases = await this.#loadStates(trx, mergedOnly);
        const keepingFlag: LocalDocumentsTable[] = [];
        const settingFlag: LocalDocumentsTable[] = [];
        for (const [name, write] of batch) {
          let state = write.state;
          if (write.merges.length > 0) {
            const base = state ?? bases.get(name);
            const updates = base ? [base, ...write.merges] : write.merges;
            // One update with nothing to merge it with (a note's first copy) is stored as it is.
            const [only] = updates;
            state = updates.length === 1 && only ? only : Y.mergeUpdates(updates);
          }
          if (state) {
            const row = { account: this.account, name, state, unsynced: write.unsynced ? 1 : 0, updated_at: now };
            (write.unsynced === undefined ? keepingFlag : settingFlag).push(row);
          } else if (write.unsynced !== undefined) {
            await trx
              .updateTable("documents")
              .set({ unsynced: write.unsynced ? 1 : 0 })
              .where("account", "=", this.account)
              .where("name", "=", name)
              .execute();
          }
        }
        for (let start = 0; start < settingFlag.length; start += WRITE_CHUNK) {
          await trx
            .insertInto("documents")
            .values(settingFlag.slice(start, start + WRITE_CHUNK))
            .onConflict((oc) =>
              oc.columns(["account", "name"]).doUpdateSet((eb) => ({
                state: eb.ref("excluded.state"),
                unsynced: eb.ref("excluded.unsynced"),
                updated_at: eb.ref("excluded.updated_at"),
              })),
            )
            .execute();
        }
        // A merge leaves the flag as it is (a new row starts with nothing unconfirmed).
        for (let start = 0; start < keepingFlag.length; start += WRITE_CHUNK) {
          await trx
            .insertInto("documents")
            .values(keepingFlag.slice(start, start + WRITE_CHUNK))
            .onConflict((oc) =>
              oc
                .columns(["account", "name"])
                .doUpdateSet((eb) => ({ state: eb.ref("excluded.state"), updated_at: eb.ref("excluded.updated_at") })),
            )
            .execute();
        }
      });
      for (const write of batch.values()) for (const waiter of write.waiters) waiter.resolve();
    } catch (error) {
      for (const write of batch.values()) for (const waiter of write.waiters) waiter.reject(error);
    }
  }
}
