import type { ReactNode } from "react";
import type * as Y from "yjs";
import { ErrorNotice } from "../components/error-notice";
import { useYDoc } from "./use-document";

/** Opens a document and renders `children` with it once ready; a calm placeholder until then. */
export function DocumentGate({ name, children }: { name: string; children: (doc: Y.Doc) => ReactNode }) {
  const state = useYDoc(name);
  switch (state.status) {
    case "loading":
      return (
        <p className="empty-state" aria-busy="true">
          Loading…
        </p>
      );
    case "failed":
      return <ErrorNotice message={state.message} />;
    case "ready":
      return children(state.doc);
  }
}
