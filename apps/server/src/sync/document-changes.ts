import type { DocumentChangesPosition } from "@tandem/core";
import { type Kysely, sql } from "kysely";
import type { Schema } from "../db/schema";

export interface DocumentChangesQuery {
  readonly since?: string | undefined;
  readonly after?: string | undefined;
  readonly limit: number;
}

export interface DocumentChangesPage {
  readonly documents: string[];
  readonly position: DocumentChangesPosition | null;
  readonly more: boolean;
}

/** A note's document name, `note:<uuid>`: joined this way round, each of the owner's notes finds its document by key. */
const NOTE_DOCUMENT_NAME = sql<string>`'note:' || notes.uuid`;

/**
 * The change feed of a user's note documents: which of the notes they own were stored at or after
 * `since`, oldest first, a page at a time (keyset paging on stored time and name, so a page never
 * repeats or skips a row of the one before). A sync client that keeps documents closed asks this
 * instead of opening every document to learn which ones changed.
 */
export async function documentChanges(db: Kysely<Schema>, ownerId: number, query: DocumentChangesQuery): Promise<DocumentChangesPage> {
  const { since, after, limit } = query;
  let select = db
    .selectFrom("notes")
    .innerJoin("documents", (join) => join.on("documents.name", "=", NOTE_DOCUMENT_NAME))
    .select(["documents.name", "documents.updated_at"])
    .where("notes.owner_id", "=", ownerId);
  if (since !== undefined) {
    select = select.where((eb) =>
      after === undefined
        ? eb("documents.updated_at", ">=", since)
        : eb.or([
            eb("documents.updated_at", ">", since),
            eb.and([eb("documents.updated_at", "=", since), eb("documents.name", ">", after)]),
          ]),
    );
  }
  const rows = await select
    .orderBy("documents.updated_at")
    .orderBy("documents.name")
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    documents: page.map((row) => row.name),
    position: last ? { since: last.updated_at, after: last.name } : null,
    more: rows.length > limit,
  };
}
