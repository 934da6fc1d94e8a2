import { useEffect, useRef, useState } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import type { NoteItem } from "./workspace-model";

/** Rows previewed at most (the host's limit per call); a list longer than this shows the rest without. */
const PREVIEWED = 500;
/** Typing dates a note about once a second; previews follow once that settles. */
const SETTLE_MS = 400;

interface Known {
  readonly updatedAt: string;
  readonly preview: string;
}

/**
 * The first words of each listed note's text, from the host (this device's copies). Only notes not
 * asked about yet, or changed since (their `updatedAt`, which a body edit sets), are asked for, so
 * typing in one note re-reads that note alone.
 */
export function useNotePreviews(api: DesktopApi, notes: readonly NoteItem[]): ReadonlyMap<string, string> {
  const known = useRef(new Map<string, Known>());
  const [previews, setPreviews] = useState<ReadonlyMap<string, string>>(new Map());
  const shown = notes.slice(0, PREVIEWED);
  const stale = shown.filter((note) => known.current.get(note.uuid)?.updatedAt !== note.updatedAt);
  // Stands for the notes to ask about, so the effect runs when (and only when) they change.
  const key = stale.map((note) => `${note.uuid}@${note.updatedAt}`).join(",");
  useEffect(() => {
    if (stale.length === 0) return;
    let current = true;
    const asked = stale.map((note) => ({ uuid: note.uuid, updatedAt: note.updatedAt }));
    const timer = setTimeout(() => {
      api.notePreviews({ noteUuids: asked.map((note) => note.uuid) }).then(
        (answer) => {
          if (!current) return;
          for (const { uuid, updatedAt } of asked) known.current.set(uuid, { updatedAt, preview: answer[uuid] ?? "" });
          setPreviews(new Map([...known.current].map(([uuid, entry]) => [uuid, entry.preview])));
        },
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
