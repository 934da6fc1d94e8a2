import { jsonToText, noteDocName, readNoteBody } from "@tandem/core";
import type { SyncService } from "../host-context";

/** About one line of a list row; the row cuts it to its width. */
const PREVIEW_LENGTH = 160;

/** The text a note starts with, on one line (blank when the note has no text yet). */
export function previewOf(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW_LENGTH ? `${flat.slice(0, PREVIEW_LENGTH).trimEnd()}…` : flat;
}

/**
 * Previews for the note list, read from this machine's copies (the live one if open), so they work
 * offline and cost the server nothing. Notes without text, or unknown here, are left out.
 */
export async function notePreviews(sync: SyncService, noteUuids: readonly string[]): Promise<Record<string, string>> {
  const previews: Record<string, string> = {};
  const names = noteUuids.map(noteDocName);
  const read = await sync.readDocuments(names, (doc) => previewOf(jsonToText(readNoteBody(doc))));
  for (const uuid of noteUuids) {
    const preview = read.get(noteDocName(uuid));
    if (preview) previews[uuid] = preview;
  }
  return previews;
}
