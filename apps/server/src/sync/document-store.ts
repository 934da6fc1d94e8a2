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
 * Saving writes the merged state, so loading is one read and one `applyStoredState`. Each save counts
 * up the row's `version`, which the views compare with the version they were computed from.
 */
export class DocumentStore {
  constructor(private readonly db: Kysely<Schema>) {}

  async load(name: string): Promise<Uint8Array | undefined> {
    const row = await this.db.selectFrom("documents").select("state").where("name", "=", name).executeTakeFirst();
    return row ? new Uint8Array(row.state) : undefined;
  }

  /**
   * Applies the stored state to `doc` and answers its size. A state Yjs runs out of stack on is
   * repaired and stored again first (see state-repair.ts), then {@link DocumentRepaired} is
   * thrown: `doc` is half loaded and must be dropped for a fresh one.
   */
  async loadInto(name: string, doc: Y.Doc): Promise<number> {
    const state = await this.load(name);
    if (!state) return 0;
    try {
      applyStoredState(doc, state);
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      await this.#write(name, await repairState(state));
      throw new DocumentRepaired(name);
    }
    return state.length;
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

  /** Stores the document's whole state; answers its size in bytes. */
  async save(name: string, doc: Y.Doc): Promise<number> {
    const state = Y.encodeStateAsUpdate(doc);
    await this.#write(name, state);
    return state.length;
  }

  async #write(name: string, state: Uint8Array): Promise<void> {
    const updatedAt = nowIso();
    await this.db
      .insertInto("documents")
      .values({ name, state, updated_at: updatedAt })
      .onConflict((oc) => oc.column("name").doUpdateSet({ state, updated_at: updatedAt, version: sql`documents.version + 1` }))
      .execute();
  }
}
