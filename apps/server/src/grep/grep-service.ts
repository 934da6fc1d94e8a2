import type { Kysely } from "kysely";
import type { Schema } from "../db/schema";
import { badRequest } from "../http/errors";
import { chooseFolder } from "../notes/folder-choice";
import { sharedFolders } from "../sharing/access";
import { buildMatcher, type GrepOptions, grepText, type LineMatch } from "./line-matcher";
import { type RegexRunner, RegexTimeoutError } from "./regex-runner";

export const MAX_MATCHES_PER_NOTE = 100;

export interface GrepInput {
  pattern: string;
  mode: "literal" | "regex";
  caseSensitive: boolean;
  contextBefore: number;
  contextAfter: number;
  folderId?: number | null;
  folderName?: string;
}

export async function grepNotes(db: Kysely<Schema>, regexRunner: RegexRunner, ownerId: number, input: GrepInput) {
  const options: GrepOptions = { ...input, maxMatchesPerNote: MAX_MATCHES_PER_NOTE };
  if (input.mode === "regex") {
    try {
      buildMatcher(options);
    } catch (error) {
      throw badRequest("invalid_regex", `body.pattern: ${(error as Error).message}`);
    }
  }
  const folder =
    input.folderId !== undefined || input.folderName !== undefined ? await chooseFolder(db, ownerId, input, "read") : undefined;
  let query = db
    .selectFrom("notes")
    .leftJoin("note_bodies", "note_bodies.uuid", "notes.uuid")
    .select(["notes.id", "notes.title", "note_bodies.text"]);
  if (folder) query = query.where("notes.folder_id", "=", folder.id);
  else if (folder === null) query = query.where("notes.owner_id", "=", ownerId).where("notes.folder_id", "is", null);
  else {
    // Everything the caller can read: their notes and those in folders shared with them.
    const shared = [...(await sharedFolders(db, ownerId)).keys(), -1];
    query = query.where((eb) => eb.or([eb("notes.owner_id", "=", ownerId), eb("notes.folder_id", "in", shared)]));
  }
  const notes = await query.orderBy("notes.id").execute();
  const texts = notes.map((note) => note.text ?? "");

  let perNote: LineMatch[][];
  if (input.mode === "literal") {
    const matcher = buildMatcher(options);
    perNote = texts.map((text) => grepText(text, matcher, options));
  } else {
    try {
      perNote = await regexRunner.run(options, texts);
    } catch (error) {
      if (error instanceof RegexTimeoutError) {
        throw badRequest("regex_timeout", `body.pattern: ${error.message}; simplify it (nested repetition such as (a+)+ backtracks)`);
      }
      throw error;
    }
  }
  const results = notes
    .map((note, index) => ({ noteId: note.id, title: note.title, matches: perNote[index] ?? [] }))
    .filter((result) => result.matches.length > 0);
  return {
    results,
    summary: {
      notesScanned: notes.length,
      notesMatched: results.length,
      truncated: results.some((r) => r.matches.length >= MAX_MATCHES_PER_NOTE),
    },
  };
}
