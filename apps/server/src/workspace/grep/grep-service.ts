import type { Kysely } from "kysely";
import type { AppContext } from "../../context";
import type { Schema } from "../../db/schema";
import { ApiError, badRequest } from "../../http/errors";
import { sharedFolders } from "../../people/sharing/access";
import { chooseFolder } from "../notes/folder-choice";
import { buildMatcher, type GrepOptions, type GrepResult, grepTexts } from "./line-matcher";
import { RegexQueueFullError, RegexRunner, RegexTimeoutError } from "./regex-runner";

export const MAX_MATCHES_PER_NOTE = 100;
/** Lines in an answer (matched or context) are cut to this many characters, around the match. */
export const MAX_LINE_CHARS = 1000;
/** An answer stops collecting matches once its lines add up to about this many characters. */
export const MAX_ANSWER_CHARS = 1_000_000;

/**
 * Regex greps: each may run 2 s before it is stopped and answered with a 400; two run at once,
 * one per caller, and a caller may have four more waiting (see {@link RegexRunner}).
 */
const REGEX_LIMITS = { timeoutMs: 2000, workers: 2, maxWaitingPerUser: 4 };

const runners = new WeakMap<AppContext, RegexRunner>();

/**
 * The server's one regex runner: REST greps and the agent's share its workers, so the limits and
 * the fairness between users hold whoever asks. Its workers are unreferenced, so they never hold
 * the process open at shutdown. The workers are this instance's; a caller's line is counted over
 * every instance (`app.shared`).
 */
export function regexRunnerFor(app: AppContext): RegexRunner {
  let runner = runners.get(app);
  if (!runner) {
    runner = new RegexRunner(REGEX_LIMITS, (caller, max) => app.shared.acquireSlot("regex-greps", caller, max));
    runners.set(app, runner);
  }
  return runner;
}

/**
 * A user's line in the regex runner: their own REST greps and the runs they ask, whether in their
 * own workspace or, as a contact, in someone else's.
 */
export const userGrepLine = (userId: number) => `user:${userId}`;

/** The runner a regex grep runs in, and whose line it waits in there: the one asking, never just whose notes they are. */
export interface RegexLine {
  readonly runner: RegexRunner;
  readonly caller: string;
}

export interface GrepInput {
  pattern: string;
  mode: "literal" | "regex";
  caseSensitive: boolean;
  contextBefore: number;
  contextAfter: number;
  folderId?: number | null;
  folderName?: string;
}

/** Where a grep narrowed by a run's grant looks: these folders (ids already checked), and the owner's notes at the root if `root`. */
export interface GrepReach {
  folderIds: readonly number[];
  root?: boolean;
}

/**
 * Lines of notes matching `input.pattern`: in the folder `input` names, or, given `within`, in
 * those folders only (and the root if it says so), or else in every note the owner can read.
 */
export async function grepNotes(db: Kysely<Schema>, regex: RegexLine, ownerId: number, input: GrepInput, within?: GrepReach) {
  const options: GrepOptions = {
    ...input,
    maxMatchesPerNote: MAX_MATCHES_PER_NOTE,
    maxLineChars: MAX_LINE_CHARS,
    maxAnswerChars: MAX_ANSWER_CHARS,
  };
  if (input.mode === "regex") {
    try {
      buildMatcher(options);
    } catch (error) {
      throw badRequest("invalid_regex", `body.pattern: ${(error as Error).message}`);
    }
  }
  const folder =
    within === undefined && (input.folderId !== undefined || input.folderName !== undefined)
      ? await chooseFolder(db, ownerId, input, "read")
      : undefined;
  let query = db
    .selectFrom("notes")
    .leftJoin("note_bodies", "note_bodies.uuid", "notes.uuid")
    .select(["notes.id", "notes.title", "note_bodies.text"]);
  if (within) {
    const inFolders = within.folderIds.length > 0 ? [...within.folderIds] : [-1];
    query = query.where((eb) =>
      within.root
        ? eb.or([eb("notes.folder_id", "in", inFolders), eb.and([eb("notes.owner_id", "=", ownerId), eb("notes.folder_id", "is", null)])])
        : eb("notes.folder_id", "in", inFolders),
    );
  } else if (folder) query = query.where("notes.folder_id", "=", folder.id);
  else if (folder === null) query = query.where("notes.owner_id", "=", ownerId).where("notes.folder_id", "is", null);
  else {
    // Everything the caller can read: their notes and those in folders shared with them.
    const shared = [...(await sharedFolders(db, ownerId)).keys(), -1];
    query = query.where((eb) => eb.or([eb("notes.owner_id", "=", ownerId), eb("notes.folder_id", "in", shared)]));
  }
  const notes = await query.orderBy("notes.id").execute();
  const texts = notes.map((note) => note.text ?? "");

  let found: GrepResult;
  if (input.mode === "literal") {
    found = grepTexts(texts, buildMatcher(options), options);
  } else {
    try {
      found = await regex.runner.run(regex.caller, options, texts);
    } catch (error) {
      if (error instanceof RegexTimeoutError) {
        throw badRequest("regex_timeout", `body.pattern: ${error.message}; simplify it (nested repetition such as (a+)+ backtracks)`);
      }
      if (error instanceof RegexQueueFullError) {
        const retryAfter = String(Math.ceil(regex.runner.limits.timeoutMs / 1000));
        throw new ApiError(429, "grep_busy", `${error.message}; retry after ${retryAfter} s`, { "retry-after": retryAfter });
      }
      throw error;
    }
  }
  const results = notes
    .map((note, index) => ({ noteId: note.id, title: note.title, matches: found.perNote[index] ?? [] }))
    .filter((result) => result.matches.length > 0);
  return {
    results,
    summary: {
      notesScanned: notes.length,
      notesMatched: results.length,
      truncated: found.truncatedBy.length > 0,
      truncatedBy: found.truncatedBy,
    },
  };
}
