import { lazyView } from "../components/lazy-view";

/**
 * The note editor's code (TipTap and ProseMirror, about a third of the page's) is a chunk of its own:
 * the page starts and shows the note list without compiling and running it first. It is fetched once
 * the list is up ({@link preloadNoteBody}), so opening a note rarely waits for it.
 */
const loadNoteBody = () => import("./note-body");

export const LazyNoteBody = lazyView(() => loadNoteBody().then((module) => module.NoteBody));

export function preloadNoteBody(): void {
  loadNoteBody().catch(() => {});
}
