import { type Kysely, sql } from "kysely";
import * as Y from "yjs";
import { nowIso } from "../clock";
import type { Schema } from "../db/schema";

/**
 * Yjs documents at rest: one row per document holding its whole state as a single update.
 * Saving writes the merged state, so loading is one read and one `applyUpdate`. Each save counts
 * up the row's `version`, which the views compare with the version they were computed from.
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
    if (state) Y.applyUpdate(doc, state);
    return doc;
  }

  /** Loads a document as stored, with its version (0 if it was never stored). */
  async loadVersioned(name: string): Promise<{ doc: Y.Doc; version: number }> {
    const doc = new Y.Doc();
    const row = await this.db.selectFrom("documents").select(["state", "version"]).where("name", "=", name).executeTakeFirst();
    if (row) Y.applyUpdate(doc, new Uint8Array(row.state));
    return { doc, version: Number(row?.version ?? 0) };
  }

  async save(name: string, doc: Y.Doc): Promise<void> {
    const state = Y.encodeStateAsUpdate(doc);
    const updatedAt = nowIso();
    await this.db
      .insertInto("documents")
      .values({ name, state, updated_at: updatedAt })
      .onConflict((oc) => oc.column("name").doUpdateSet({ state, updated_at: updatedAt, version: sql`documents.version + 1` }))
      .execute();
  }
}
