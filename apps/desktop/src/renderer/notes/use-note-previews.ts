import { useEffect, useState } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import type { NoteItem } from "./workspace-model";

/** Rows previewed at most (the host's limit per call); a list longer than this shows the rest without. */
const PREVIEWED = 500;
/** Typing dates a note about once a second; previews follow once that settles. */
const SETTLE_MS = 400;

const NONE: ReadonlyMap<string, string> = new Map();

/**
 * The first words of each listed note's text, from the host (this device's copies). Asked again
 * when the list or a note's `updatedAt` changes, which a body edit sets.
 */
export function useNotePreviews(api: DesktopApi, notes: readonly NoteItem[]): ReadonlyMap<string, string> {
  const [previews, setPreviews] = useState(NONE);
  const shown = notes.slice(0, PREVIEWED);
  const key = shown.map((note) => `${note.uuid}@${note.updatedAt}`).join(",");
  // `key` stands for the uuids and dates of `shown`.
  useEffect(() => {
    let current = true;
    const noteUuids = shown.map((note) => note.uuid);
    const timer = setTimeout(() => {
      api.notePreviews({ noteUuids }).then(
        (answer) => current && setPreviews(new Map(Object.entries(answer))),
        // A failed preview is no reason to bother the owner: the rows show without it.
        () => undefined,
      );
    }, SETTLE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [api, key]);
  return previews;
}
