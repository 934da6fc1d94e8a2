import { jsonToMarkdown, type Scope } from "@tandem/core";
import type { RunGrant } from "../../agent/tools/run-grant";
import type { AppContext } from "../../context";
import { listFolders } from "../../workspace/folders/folders-service";
import { memoryFolderIds } from "../../workspace/memory/memory-tree";
import { getOwnedNote, readBody } from "../../workspace/notes/notes-service";
import type { ShareLinkRow } from "./share-links";

/** How much of a shared note joins a guest's prompt. */
const NOTE_CHARS = 40_000;

/** What a guest's run may reach: its grant, and for a link to one note, that note's text. */
export interface GuestAccess {
  readonly grant: RunGrant;
  /** A note link's note, given as content (its run has no note tools at all). */
  readonly note?: { readonly id: number; readonly title: string; readonly markdown: string };
}

/**
 * The guest's grant, built from the link alone and read again on every message (so a PATCH or
 * a new folder applies at once). Nothing the guest sends takes part: a message conveys intent,
 * never authority.
 *
 * - Scope `all`: all the owner's own notes, those at the root included (`rootNotes`): the owner's
 *   folders, never those others share with the owner, never the agent's Memory folder.
 * - Scope `folders`: the named folders and everything below them that is the owner's own.
 * - Scope `note_only`: no note tools; the one note is given as content.
 * - Notes are read only unless `notesAccess` is `write` or `edit`; `todos` adds reading todos.
 *   Nothing else (memory, snapshots, network, remote tools) is ever in a guest's toolset.
 */
export async function guestAccess(app: AppContext, link: ShareLinkRow, sessionId: string, label: string): Promise<GuestAccess> {
  const ownerId = Number(link.owner_id);
  const caller = { kind: "guest" as const, sessionId, label };
  const { scopes, folders, rootNotes } = await linkReach(app, link);
  if (link.scope === "note_only") {
    const grant: RunGrant = { ownerId, caller, scopes, folders };
    const row = await getOwnedNote(app.db, ownerId, Number(link.note_id)).catch(() => null);
    if (!row) return { grant };
    const markdown = jsonToMarkdown(await readBody(app.sync, row.uuid));
    return {
      grant,
      note: {
        id: Number(row.id),
        title: row.title,
        markdown: markdown.length > NOTE_CHARS ? `${markdown.slice(0, NOTE_CHARS)}\n[…cut]` : markdown,
      },
    };
  }
  return { grant: { ownerId, caller, scopes, folders, rootNotes } };
}

/** What a link's guests reach: scopes, the owner's folders, and whether the owner's notes at the root too. */
export interface LinkReach {
  scopes: Set<Scope>;
  folders: Set<number>;
  rootNotes: boolean;
}

/**
 * The scopes and folders a link's guests reach (see {@link guestAccess}), read from the link as it
 * is now. Everything born of the link (a contact made by redeeming it) is bounded by this too.
 */
export async function linkReach(app: AppContext, link: ShareLinkRow): Promise<LinkReach> {
  const ownerId = Number(link.owner_id);
  const scopes = new Set<Scope>();
  if (link.todos === 1) scopes.add("os.todos:read");
  if (link.scope === "note_only") return { scopes, folders: new Set(), rootNotes: false };
  scopes.add("os.notes:read");
  if (link.notes_access !== "read") scopes.add("os.notes:write");
  const own = (await listFolders(app.db, ownerId)).filter((f) => !f.shared);
  const memory = new Set(await memoryFolderIds(app.db, ownerId));
  let covered: number[];
  if (link.scope === "all") {
    covered = own.map((f) => f.id);
  } else {
    covered = JSON.parse(link.folder_ids) as number[];
    for (let i = 0; i < covered.length; i++) {
      for (const f of own) if (f.parentId === covered[i] && !covered.includes(f.id)) covered.push(f.id);
    }
    const ownIds = new Set(own.map((f) => f.id));
    covered = covered.filter((id) => ownIds.has(id));
  }
  return { scopes, folders: new Set(covered.filter((id) => !memory.has(id))), rootNotes: link.scope === "all" };
}
