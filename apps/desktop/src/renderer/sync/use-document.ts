import { useCallback, useContext, useEffect, useMemo, useState, useSyncExternalStore } from "react";
import type * as Y from "yjs";
import type { LocalSyncInfo } from "../../shared/desktop-api";
import type { DocumentState } from "./document-hub";
import { DocumentsContext, type DocumentsContextValue } from "./documents-context";

/*
 * The renderer's document layer, shared by the notes and todos views:
 *
 *   const { todosDoc } = useLocalSync();
 *   const state = useYDoc(todosDoc);                     // loading | ready (with doc) | failed
 *   const todos = useDocValue(state, readTodos, EMPTY);  // re-read on every change of the doc
 *   doc.transact(() => putTodo(doc, uuid, { ... }));     // edit: the hub stores and replicates it
 *
 * or let <DocumentGate name={todosDoc}> render the loading and failure states and hand over the doc.
 */

function useDocuments(): DocumentsContextValue {
  const value = useContext(DocumentsContext);
  if (!value) throw new Error("Document hooks need a <DocumentsProvider> above them (the signed-in app shell has one)");
  return value;
}

/** Where this session's documents are: the user id and the names of the workspace and todos documents. */
export function useLocalSync(): LocalSyncInfo {
  return useDocuments().info;
}

const NO_DOCUMENT: DocumentState = Object.freeze({ status: "loading" });

/**
 * Opens a document (`workspace:<id>`, `note:<uuid>`, `todos:<id>`) for as long as the calling
 * component is mounted. It is `ready` once the local hub has sent its stored state, so a ready
 * document never shows an empty state that is about to be filled. `null` opens nothing.
 */
export function useYDoc(name: string | null): DocumentState {
  const { hub } = useDocuments();
  const subscribe = useCallback(
    (onChange: () => void) => {
      if (name === null) return () => {};
      const release = hub.acquire(name);
      const unsubscribe = hub.subscribe(name, onChange);
      return () => {
        unsubscribe();
        release();
      };
    },
    [hub, name],
  );
  return useSyncExternalStore(subscribe, () => (name === null ? NO_DOCUMENT : hub.state(name)));
}

/**
 * A value derived from a document, recomputed whenever the document changes (local edits, and
 * edits arriving from the server). `read` should be a stable function (defined at module level or
 * memoised); it is not called until the document is ready, and `fallback` is answered until then.
 */
export function useDocValue<T>(document: DocumentState | Y.Doc | null, read: (doc: Y.Doc) => T, fallback: T): T {
  const doc = document === null || "getMap" in document ? document : document.status === "ready" ? document.doc : null;
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (!doc) return;
    const bump = () => setVersion((n) => n + 1);
    doc.on("update", bump);
    return () => doc.off("update", bump);
  }, [doc]);
  // `version` is the signal that the document changed; `fallback` only matters before it is ready.
  return useMemo(() => (doc ? read(doc) : fallback), [doc, read, version]);
}
