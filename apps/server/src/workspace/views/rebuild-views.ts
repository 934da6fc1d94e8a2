import { todosDocName, workspaceDocName } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import { DocumentStore } from "../../sync/document-store";
import { updateDocumentViews } from "./document-views";

/**
 * Recomputes every SQL view from the stored documents: the views hold nothing the documents do
 * not, so this restores lost or damaged views. Numeric ids of rows that still exist are kept, and
 * so is who owns which note (a record, not a view). Workspaces go first: they record note owners.
 */
export async function rebuildViews(db: Kysely<Schema>): Promise<{ workspaces: number; notes: number }> {
  const store = new DocumentStore(db);
  const users = await db.selectFrom("users").select("id").execute();
  for (const { id } of users) {
    await updateDocumentViews(db, store, workspaceDocName(id));
    await updateDocumentViews(db, store, todosDocName(id));
  }
  const names = await db.selectFrom("documents").select("name").where("name", "like", "note:%").execute();
  for (const { name } of names) await updateDocumentViews(db, store, name);
  return { workspaces: users.length, notes: names.length };
}
