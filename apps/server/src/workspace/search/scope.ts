import { type RawBuilder, sql } from "kysely";
import type { Dialect } from "../../db/database";

export interface SearchScope {
  ownerId: number;
  /** Folders of other people shared with the owner: their notes are searched too. */
  sharedFolderIds?: readonly number[];
  /** Only notes in these folders when given (and none at the root, unless `root`). */
  folderIds?: readonly number[];
  /** With `folderIds`: the owner's notes at the root too. */
  root?: boolean;
}

/** A note found by search, before its snippet is made. */
export interface RankedNote {
  id: number;
  uuid: string;
  title: string;
  folderId: number | null;
  score: number;
}

/**
 * The conditions that restrict a query over `notes` (joined with `note_bodies` when there are
 * symbols) to what the scope allows, and to notes holding every symbol: the one filter every kind
 * of search applies alike. `notes` holds no trashed note, so no result is ever a trashed one.
 */
export function scopeConditions(dialect: Dialect, scope: SearchScope, symbols: readonly string[]): RawBuilder<boolean>[] {
  const ids = (values: readonly number[]) => sql.join(values.length ? values : [-1]);
  const conditions = [sql<boolean>`(notes.owner_id = ${scope.ownerId} or notes.folder_id in (${ids(scope.sharedFolderIds ?? [])}))`];
  const position = sql.raw(dialect === "sqlite" ? "instr" : "strpos");
  for (const symbol of symbols) {
    conditions.push(sql<boolean>`(${position}(note_bodies.text, ${symbol}) > 0 or ${position}(notes.title, ${symbol}) > 0)`);
  }
  if (scope.folderIds) {
    // A note at the root matching the first condition is the owner's own.
    const root = scope.root ? sql` or notes.folder_id is null` : sql``;
    conditions.push(sql<boolean>`(notes.folder_id in (${ids(scope.folderIds)})${root})`);
  }
  return conditions;
}
