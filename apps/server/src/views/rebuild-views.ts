import { parseDocName, todosDocName, workspaceDocName } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import { DocumentStore } from "../sync/document-store";
import { materializeNoteBody } from "./note-view";
import { materializeTodos } from "./todos-view";
import { materializeWorkspace } from "./workspace-view";

/**
 * Recomputes every SQL view from the stored documents: the views hold nothing the documents do
 * not, so this restores lost or damaged views. Numeric ids of rows that still exist are kept.
 */
export async function rebuildViews(db: Kysely<Schema>): Promise<{ workspaces: number; notes: number }> {
  const store = new DocumentStore(db);
  const users = await db.selectFrom("users").select("id").execute();
  for (const { id } of users) {
    await materializeWorkspace(db, id, await store.loadDoc(workspaceDocName(id)));
    await materializeTodos(db, id, await store.loadDoc(todosDocName(id)));
  }
  const names = await db.selectFrom("documents").select("name").where("name", "like", "note:%").execute();
  let notes = 0;
  for (const { name } of names) {
    const ref = parseDocName(name);
    if (ref?.kind !== "note") continue;
    await materializeNoteBody(db, ref.uuid, await store.loadDoc(name));
    notes++;
  }
  return { workspaces: users.length, notes };
}
