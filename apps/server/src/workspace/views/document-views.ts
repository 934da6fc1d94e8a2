import { parseDocName } from "@tandem/core";
import type { Kysely } from "kysely";
import type { Schema } from "../../db/schema";
import type { DocumentStore } from "../../sync/document-store";
import { materializeNoteBody } from "./note-view";
import { materializeTodos } from "./todos-view";
import { materializeWorkspace } from "./workspace-view";

/**
 * Brings the SQL views derived from one document in line with its stored state, and records the
 * stored version they now show. Views are computed from what is stored, never from a newer live
 * copy, so after a crash they never show what the documents lost.
 *
 * Another process (a second instance, the CLI) may store the document and compute its views while
 * this runs, and finish first: views written here from the older state would then stay. So when
 * the document was stored again meanwhile, this computes them once more. Whichever process writes
 * views last has then read the last stored state (each store is followed by a view update).
 */
export async function updateDocumentViews(db: Kysely<Schema>, store: DocumentStore, name: string): Promise<void> {
  const ref = parseDocName(name);
  if (!ref) return;
  for (;;) {
    const { doc, version } = await store.loadVersioned(name);
    if (ref.kind === "workspace") await materializeWorkspace(db, ref.userId, doc);
    else if (ref.kind === "note") await materializeNoteBody(db, ref.uuid, doc);
    else await materializeTodos(db, ref.userId, doc);
    await db
      .updateTable("documents")
      .set({ views_version: version })
      .where("name", "=", name)
      .where("views_version", "<", version)
      .execute();
    const now = await db.selectFrom("documents").select("version").where("name", "=", name).executeTakeFirst();
    if (Number(now?.version ?? 0) <= version) return;
  }
}

/** Workspaces first: they record who owns which note, which note views and access rely on. */
function workspacesFirst(a: string, b: string): number {
  return Number(!a.startsWith("workspace:")) - Number(!b.startsWith("workspace:")) || a.localeCompare(b);
}

/**
 * Recomputes the views of every document stored since its views were last computed: after a
 * crash between storing a document and updating its views (views follow the store). Run at start;
 * a document whose views fail is reported and left for its next store, the others go on.
 */
export async function reconcileViews(
  db: Kysely<Schema>,
  store: DocumentStore,
  onError: (name: string, error: unknown) => void,
): Promise<number> {
  const stale = await db.selectFrom("documents").select("name").whereRef("views_version", "<", "version").execute();
  const names = stale.map((row) => row.name).sort(workspacesFirst);
  for (const name of names) await updateDocumentViews(db, store, name).catch((error: unknown) => onError(name, error));
  return names.length;
}
