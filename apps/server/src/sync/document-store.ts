import { applyStoredState } from "@tandem/core";
import { type Kysely, sql } from "kysely";
import * as Y from "yjs";
import { nowIso } from "../clock";
import type { Schema } from "../db/schema";
import { isStackOverflow, repairState } from "./state-repair";

/** The stored state could not be loaded as it was and has been repaired: load the document again. */
export class DocumentRepaired extends Error {
  constructor(readonly documentName: string) {
    super(`${documentName} was repaired in storage; load it again`);
    this.name = "DocumentRepaired";
  }
}

/**
 * Yjs documents at rest: one row per document holding its whole state as a single update.
 * Loading is one read and one `applyStoredState`. Each store counts up the row's `version`, which
 * the views compare with the version they were computed from.
 *
 * Several processes store the same document (server instances on one PostgreSQL database, the CLI
 * beside a running server), so a store never overwrites another's: when the row is no longer at the
 * version this document holds, one transaction locks it, merges what is stored into the document
 * (Yjs updates merge in any order, any number of times) and writes the result. What another process
 * stored thus reaches the live document too, and its open editors. See docs/scaling.md ("Never lose
 * a write") for why a row lock and not an update log.
 */
export class DocumentStore {
  /**
   * The stored version each document object is known to hold all of: the version it was loaded
   * at or last stored as. While the row is still at that version nobody else has stored, and a
   * store writes the document with one conditional update, without reading the stored state back.
   * Only a shortcut: a document not in here (or a row that moved on) is merged with what is stored.
   */
  readonly #holds = new WeakMap<Y.Doc, number>();

  constructor(private readonly db: Kysely<Schema>) {}

  async load(name: string): Promise<Uint8Array | undefined> {
    return (await this.#read(name))?.state;
  }

  async #read(name: string): Promise<{ state: Uint8Array; version: number } | undefined> {
    const row = await this.db.selectFrom("documents").select(["state", "version"]).where("name", "=", name).executeTakeFirst();
    return row ? { state: new Uint8Array(row.state), version: Number(row.version) } : undefined;
  }

  /**
   * Applies the stored state to `doc` and answers its size. A state Yjs runs out of stack on is
   * repaired and stored again first (see state-repair.ts), then {@link DocumentRepaired} is
   * thrown: `doc` is half loaded and must be dropped for a fresh one.
   */
  async loadInto(name: string, doc: Y.Doc): Promise<number> {
    const stored = await this.#read(name);
    if (!stored) return 0;
    try {
      applyStoredState(doc, stored.state);
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      await this.#replace(name, stored.version, await repairState(stored.state));
      throw new DocumentRepaired(name);
    }
    this.#holds.set(doc, stored.version);
    return stored.state.length;
  }

  /** Loads a document as stored, with its version (0 if it was never stored). */
  async loadVersioned(name: string): Promise<{ doc: Y.Doc; version: number }> {
    // The version is read first: a save in between makes the state newer than the version, never older,
    // so the views at worst are computed again at the next start.
    const row = await this.db.selectFrom("documents").select("version").where("name", "=", name).executeTakeFirst();
    return { doc: await this.loadDoc(name), version: Number(row?.version ?? 0) };
  }

  /** Loads a document into a fresh Y.Doc (empty if it was never stored). */
  async loadDoc(name: string): Promise<Y.Doc> {
    try {
      const doc = new Y.Doc();
      await this.loadInto(name, doc);
      return doc;
    } catch (error) {
      if (!(error instanceof DocumentRepaired)) throw error;
      const doc = new Y.Doc();
      await this.loadInto(name, doc);
      return doc;
    }
  }

  /**
   * Stores the document merged with what is stored, atomically; answers the stored size in bytes.
   * What the stored state held that `doc` lacked (another process's store) is applied to `doc`
   * first, as a transaction with `origin`, so its connections receive it.
   */
  async save(name: string, doc: Y.Doc, origin?: unknown): Promise<number> {
    // Usually nobody else stored since this document was loaded or stored here: then one
    // conditional write, atomic on its own, costs what the plain overwrite did (bench/store.ts).
    const known = this.#holds.get(doc);
    if (known !== undefined) {
      const state = Y.encodeStateAsUpdate(doc);
      const written = await this.db
        .updateTable("documents")
        .set({ state, updated_at: nowIso(), version: sql`version + 1` })
        .where("name", "=", name)
        .where("version", "=", known)
        .returning("version")
        .executeTakeFirst();
      if (written) {
        this.#holds.set(doc, Number(written.version));
        return state.length;
      }
    }
    return this.#mergeAndStore(name, doc, origin);
  }

  /** The store when another process may have stored: lock the row, merge what it holds, write the union. */
  async #mergeAndStore(name: string, doc: Y.Doc, origin: unknown): Promise<number> {
    // A store given a transaction (a seed writing many documents in one) locks and writes in it.
    const atomically = <T>(work: (trx: Kysely<Schema>) => Promise<T>) =>
      this.db.isTransaction ? work(this.db) : this.db.transaction().execute(work);
    return atomically(async (trx) => {
      const updatedAt = nowIso();
      // The lock (PostgreSQL) or the write transaction (SQLite: BEGIN IMMEDIATE) keeps every other
      // store of this document out until this one commits.
      const lock = () => trx.selectFrom("documents").select("state").where("name", "=", name).forUpdate().executeTakeFirst();
      let stored = await lock();
      if (!stored) {
        // A first store: the only one with nothing to merge. If another process creates the row
        // meanwhile, PostgreSQL waits for it to commit, nothing is inserted, and we merge below.
        const state = Y.encodeStateAsUpdate(doc);
        const created = await trx
          .insertInto("documents")
          .values({ name, state, updated_at: updatedAt })
          .onConflict((oc) => oc.column("name").doNothing())
          .returning("version")
          .executeTakeFirst();
        if (created) {
          this.#holds.set(doc, Number(created.version));
          return state.length;
        }
        stored = await lock();
      }
      // Yjs keeps what the document already has and adds the rest: the merge is idempotent and
      // commutative, so which process stores first does not matter.
      const merged = stored?.state;
      if (merged) doc.transact(() => applyStoredState(doc, new Uint8Array(merged)), origin);
      const state = Y.encodeStateAsUpdate(doc);
      const written = await trx
        .insertInto("documents")
        .values({ name, state, updated_at: updatedAt })
        .onConflict((oc) => oc.column("name").doUpdateSet({ state, updated_at: updatedAt, version: sql`documents.version + 1` }))
        .returning("version")
        .executeTakeFirstOrThrow();
      this.#holds.set(doc, Number(written.version));
      return state.length;
    });
  }

  /**
   * Replaces a stored state with its repaired form, only if nobody stored the document since it
   * was read: a newer state is left for the next load to repair (a merge would bring the damage back).
   */
  async #replace(name: string, version: number, state: Uint8Array): Promise<void> {
    await this.db
      .updateTable("documents")
      .set({ state, updated_at: nowIso(), version: sql`version + 1` })
      .where("name", "=", name)
      .where("version", "=", version)
      .execute();
  }
}
