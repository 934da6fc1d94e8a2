import { type Ref, useEffect, useState } from "react";
import type { DesktopApi, NoteSearchAnswer } from "../../shared/desktop-api";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { Highlighted } from "./highlight";
import { displayTitle } from "./workspace-model";

/** Searching as one types, once the typing pauses this long. */
const TYPING_PAUSE_MS = 300;

type Results =
  | { readonly status: "idle" }
  | { readonly status: "searching" }
  | { readonly status: "ready"; readonly query: string; readonly answer: NoteSearchAnswer }
  | { readonly status: "failed"; readonly message: string };

/** The query typed in the search box; empty means the folder's list is shown instead of results. */
export function SearchBox({ query, onChange, ref }: { query: string; onChange: (query: string) => void; ref?: Ref<HTMLInputElement> }) {
  return (
    <search className="search-box">
      <input
        ref={ref}
        type="search"
        aria-label="Search notes"
        placeholder="Search notes"
        dir="auto"
        value={query}
        onChange={(event) => onChange(event.target.value)}
        onKeyDown={(event) => {
          // Escape clears a search first; on an empty box it closes the panel around it.
          if (event.key === "Escape" && query !== "") {
            event.stopPropagation();
            onChange("");
          }
        }}
      />
    </search>
  );
}

/**
 * Results for `query` from the host: the server's ranked search when online, a scan of this
 * device's copy when not. The source is shown, since offline results are simpler.
 */
export function SearchResults({ api, query, onOpen }: { api: DesktopApi; query: string; onOpen: (uuid: string) => void }) {
  const [results, setResults] = useState<Results>({ status: "idle" });
  useEffect(() => {
    const trimmed = query.trim();
    if (trimmed === "") {
      setResults({ status: "idle" });
      return;
    }
    let current = true;
    setResults({ status: "searching" });
    const timer = setTimeout(() => {
      api.searchNotes({ query: trimmed }).then(
        (answer) => {
          if (current) setResults({ status: "ready", query: trimmed, answer });
        },
        (error: unknown) => {
          if (current) setResults({ status: "failed", message: errorMessage(error) });
        },
      );
    }, TYPING_PAUSE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [api, query]);

  switch (results.status) {
    case "idle":
      return null;
    case "searching":
      return (
        <p className="empty-state" aria-busy="true">
          Searching…
        </p>
      );
    case "failed":
      return <ErrorNotice message={`Search failed: ${results.message}`} />;
    case "ready": {
      const { answer } = results;
      return (
        <section className="search-results" aria-label="Search results">
          <p className="search-source" data-source={answer.source}>
            {answer.source === "server" ? "Results from the server" : "Offline: results from this device"}
          </p>
          {answer.results.length === 0 ? (
            <p className="empty-state">No notes match “{results.query}”.</p>
          ) : (
            <ul className="note-list">
              {answer.results.map((hit) => (
                <li key={hit.uuid}>
                  <button type="button" className="note-item search-hit" onClick={() => onOpen(hit.uuid)}>
                    <span className="note-item-title" dir="auto">
                      <Highlighted text={displayTitle(hit.title)} query={results.query} />
                    </span>
                    <span className="search-snippet" dir="auto">
                      <Highlighted text={hit.snippet} query={results.query} />
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
      );
    }
  }
}
