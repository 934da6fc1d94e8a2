import { applyStoredState } from "@tandem/core";
import type { Kysely } from "kysely";
import * as Y from "yjs";
import { nowIso } from "../clock";
import type { Schema } from "../db/schema";

/**
 * Yjs documents at rest: one row per document holding its whole state as a single update.
 * Saving writes the merged state, so loading is one read and one `applyStoredState`.
 */
export class DocumentStore {
  constructor(private readonly db: Kysely<Schema>) {}

  async load(name: string): Promise<Uint8Array | undefined> {
    const row = await this.db.selectFrom("documents").select("state").where("name", "=", name).executeTakeFirst();
    return row ? new Uint8Array(row.state) : undefined;
  }

  /** Loads a document into a fresh Y.Doc (empty if it was never stored). */
  async loadDoc(name: string): Promise<Y.Doc> {
    const doc = new Y.Doc();
    const state = await this.load(name);
    if (state) applyStoredState(doc, state);
    return doc;
  }

  /** Stores the document's whole state; answers its size in bytes. */
  async save(name: string, doc: Y.Doc): Promise<number> {
    const state = Y.encodeStateAsUpdate(doc);
    const updatedAt = nowIso();
    await this.db
      .insertInto("documents")
      .values({ name, state, updated_at: updatedAt })
      .onConflict((oc) => oc.column("name").doUpdateSet({ state, updated_at: updatedAt }))
      .execute();
    return state.length;
  }
}
