import { jsonToText, type NoteMeta, noteDocName, readNoteBody, readNotes, withoutTrashed, workspaceDocName } from "@tandem/core";
import type { NoteSearchHit } from "../../shared/desktop-api";
import type { SyncService } from "../host-context";

/** About as long as the server's snippets (24 words). */
const SNIPPET_RADIUS = 80;

interface Scored {
  readonly hit: NoteSearchHit;
  readonly score: number;
  readonly updatedAt: string;
}

/** Lower-case words of the query; a note matches when it contains every one (in title or body). */
function termsOf(query: string): string[] {
  return [...new Set(query.toLocaleLowerCase().split(/\s+/).filter(Boolean))];
}

function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** The text around the first match, on one line, with ellipses where it was cut. */
function snippetOf(text: string, terms: readonly string[]): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const flatLower = flat.toLocaleLowerCase();
  // Lower-casing can change a string's length (rarely: "İ"); then positions would not line up.
  const comparable = flatLower.length === flat.length;
  const first = comparable ? Math.min(...terms.map((term) => flatLower.indexOf(term)).filter((at) => at >= 0)) : 0;
  if (!Number.isFinite(first)) return flat.slice(0, SNIPPET_RADIUS * 2) + (flat.length > SNIPPET_RADIUS * 2 ? "…" : "");
  const start = Math.max(0, first - SNIPPET_RADIUS);
  const end = Math.min(flat.length, first + SNIPPET_RADIUS);
  return `${start > 0 ? "…" : ""}${flat.slice(start, end)}${end < flat.length ? "…" : ""}`;
}

function score(uuid: string, meta: NoteMeta, text: string, terms: readonly string[]): Scored | undefined {
  const title = meta.title.toLocaleLowerCase();
  const body = text.toLocaleLowerCase();
  let total = 0;
  for (const term of terms) {
    const inTitle = occurrences(title, term);
    const inBody = occurrences(body, term);
    if (inTitle + inBody === 0) return undefined;
    // A title match says more about what the note is than a mention in its body.
    total += inTitle * 5 + Math.min(inBody, 10);
  }
  return { hit: { uuid, title: meta.title, snippet: snippetOf(text, terms) }, score: total, updatedAt: meta.updatedAt };
}

/**
 * Search without the server: every note the local workspace lists, by title and body text, read
 * from this machine's copies. Every query word must appear; title matches rank first, then
 * frequent mentions, then recent notes. Plain substring matching, simpler than the server's
 * ranked full-text search, which is why the answer says where it came from.
 */
export async function searchLocally(sync: SyncService, userId: number, query: string, limit: number): Promise<NoteSearchHit[]> {
  const terms = termsOf(query);
  if (terms.length === 0) return [];
  // Trashed notes are out of every search, as on the server.
  const notes = (await sync.readDocument(workspaceDocName(userId), (doc) => withoutTrashed(readNotes(doc)))) ?? new Map<string, NoteMeta>();
  const found: Scored[] = [];
  const byName = new Map([...notes].map(([uuid, meta]) => [noteDocName(uuid), { uuid, meta }]));
  // Scored as read: only the scores are kept, not every note's text.
  const read = await sync.readDocuments([...byName.keys()], (doc, name) => {
    const note = byName.get(name);
    return note ? score(note.uuid, note.meta, jsonToText(readNoteBody(doc)), terms) : undefined;
  });
  for (const [name, { uuid, meta }] of byName) {
    // A note without a copy here can still match by its title.
    const scored = read.has(name) ? read.get(name) : score(uuid, meta, "", terms);
    if (scored) found.push(scored);
  }
  return found
    .sort((a, b) => b.score - a.score || b.updatedAt.localeCompare(a.updatedAt))
    .slice(0, limit)
    .map((scored) => scored.hit);
}
