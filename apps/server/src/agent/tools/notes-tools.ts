import { jsonToMarkdown, MAX_FOLDER_NAME_LENGTH, markdownToJson } from "@tandem/core";
import { z } from "zod";
import { badRequest } from "../../http/errors";
import { grepNotes, regexRunnerFor, userGrepLine } from "../../workspace/grep/grep-service";
import { chooseFolder } from "../../workspace/notes/folder-choice";
import {
  appendedBody,
  changeMeta,
  createNoteFromJson,
  listNotes,
  listNotesInFolders,
  readBody,
  replaceBody,
  toListItem,
} from "../../workspace/notes/notes-service";
import { searchNotes } from "../../workspace/search/search-index";
import { takeSnapshot } from "../../workspace/snapshots/snapshots-service";
import { type AnyAgentTool, defineTool, type ToolRunContext } from "./agent-tool";
import { chooseCoveredFolder, coveredFolders, noteInGrant, searchScopeOf, withSubfolders } from "./grant-scope";
import type { RunGrant } from "./run-grant";
import { EntityId, limitOf, Markdown, Title } from "./tool-inputs";

const NoteId = EntityId.describe("the note's id, from search_notes, grep_notes or list_notes");
const FolderId = EntityId.describe("a folder's id, from list_folders");
const FolderName = z.string().trim().min(1).max(MAX_FOLDER_NAME_LENGTH).describe("a folder's name (any case), if no other has it");

/** The folder the input names, and the ids a search or grep then looks in: it and its subfolders. */
async function folderScope(context: ToolRunContext, choice: { folderId?: number; folderName?: string }) {
  const folders = await coveredFolders(context);
  const folder = chooseCoveredFolder(folders, choice);
  return { folders, folder, within: folder && withSubfolders(folders, folder.id) };
}

const searchNotesTool = defineTool({
  name: "search_notes",
  namespace: "notes",
  source: "native",
  readWrite: "read",
  needs: "os.notes:read",
  route: "searchNotes",
  description:
    "Full-text search of the user's notes (titles and bodies), best matches first, each with a snippet. Use it to find notes about a topic before reading them with get_note_content.",
  input: z.object({
    query: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .describe(
        "a question or words; notes with more of the words (stemmed, stop words ignored), rarer ones and in titles or headings rank first",
      ),
    folderName: FolderName.optional().describe("only notes in this folder and its subfolders"),
    limit: limitOf(10),
  }),
  async execute(input, context) {
    const { folders, within } = await folderScope(context, input);
    const hits = await searchNotes(
      context.app.db,
      context.app.database.dialect,
      searchScopeOf(context, folders, within),
      input.query,
      input.limit,
      context.app.embedder,
    );
    return { results: hits.map(({ id, title, snippet, folderId }) => ({ id, title, snippet, folderId })) };
  },
});

/**
 * Whose regex line a run's grep waits in: the one asking. The owner's own runs and the heartbeat's
 * are the owner's; a contact's are the contact's own (as their REST greps are); each guest session
 * has its own. So a guest or a contact cannot fill the owner's line.
 */
function grepLineOf(grant: RunGrant): string {
  switch (grant.caller.kind) {
    case "owner":
    case "heartbeat":
      return userGrepLine(grant.ownerId);
    case "contact":
      return userGrepLine(grant.caller.userId);
    case "guest":
      return `guest:${grant.caller.sessionId}`;
  }
}

const grepNotesTool = defineTool({
  name: "grep_notes",
  namespace: "notes",
  source: "native",
  readWrite: "read",
  needs: "os.notes:read",
  route: "grepNotes",
  description:
    "Find lines of the user's notes that contain a string (case-insensitive) or match a JavaScript regular expression. Answers each matching note with its line numbers and lines.",
  input: z.object({
    pattern: z.string().min(1).max(500).describe("the text to find, or a regular expression with mode regex"),
    mode: z.enum(["literal", "regex"]).default("literal").describe("literal: the text as it is; regex: a regular expression"),
    folderName: FolderName.optional().describe("only notes in this folder and its subfolders"),
  }),
  async execute(input, context) {
    const { folders, within } = await folderScope(context, input);
    // Anything narrower than all the owner can read goes to the grep as the folder ids it may scan.
    const scope = within
      ? { folderIds: within }
      : context.grant.folders === "all"
        ? undefined
        : { folderIds: folders.map((f) => f.id), root: context.grant.rootNotes === true };
    const { app, grant } = context;
    const found = await grepNotes(
      app.db,
      { runner: regexRunnerFor(app), caller: grepLineOf(grant) },
      grant.ownerId,
      { pattern: input.pattern, mode: input.mode, caseSensitive: false, contextBefore: 0, contextAfter: 0 },
      scope,
    );
    return {
      results: found.results.map(({ noteId, title, matches }) => ({
        noteId,
        title,
        matches: matches.map(({ line, text }) => ({ line, text })),
      })),
    };
  },
});

const getNoteContentTool = defineTool({
  name: "get_note_content",
  namespace: "notes",
  source: "native",
  readWrite: "read",
  needs: "os.notes:read",
  route: "getNote",
  description: "Read one note: its title, folder, last change and its body as Markdown.",
  input: z.object({ noteId: NoteId }),
  async execute({ noteId }, context) {
    const row = await noteInGrant(context, noteId, "read");
    const item = toListItem(row);
    const markdown = jsonToMarkdown(await readBody(context.app.sync, row.uuid));
    return { id: item.id, title: item.title, folderId: item.folderId, markdown, updatedAt: item.updatedAt };
  },
});

const listNotesTool = defineTool({
  name: "list_notes",
  namespace: "notes",
  source: "native",
  readWrite: "read",
  needs: "os.notes:read",
  route: "listNotes",
  description:
    "List the notes in one folder, pinned first, then most recently changed. Without a folder: the notes at the top level (outside any folder), or, when this conversation may only see some folders, the latest notes of those folders (and of the top level, if it may see that).",
  input: z.object({
    folderId: FolderId.optional(),
    folderName: FolderName.optional(),
    limit: limitOf(20),
  }),
  async execute(input, context) {
    const { app, grant } = context;
    const { folders, folder } = await folderScope(context, input);
    const notes = folder
      ? (await listNotes(app.db, grant.ownerId, { folderId: folder.id, limit: input.limit })).notes
      : grant.folders === "all"
        ? (await listNotes(app.db, grant.ownerId, { limit: input.limit })).notes
        : await listNotesInFolders(
            app.db,
            grant.ownerId,
            folders.map((f) => f.id),
            input.limit,
            grant.rootNotes === true,
          );
    return { notes: notes.map(({ id, title, folderId, updatedAt, pinned }) => ({ id, title, folderId, updatedAt, pinned })) };
  },
});

const listFoldersTool = defineTool({
  name: "list_folders",
  namespace: "notes",
  source: "native",
  readWrite: "read",
  needs: "os.notes:read",
  route: "listFolders",
  description: "List the folders this conversation can see, each with its id, parent and path.",
  input: z.object({}),
  async execute(_input, context) {
    const folders = await coveredFolders(context);
    return { folders: folders.map(({ id, name, parentId, path }) => ({ id, name, parentId, path })) };
  },
});

const createNoteTool = defineTool({
  name: "create_note",
  namespace: "notes",
  source: "native",
  readWrite: "write",
  needs: "os.notes:write",
  route: "createNote",
  description: "Create a note from Markdown, in a folder (by id or name) or, when none is given, at the top level.",
  input: z.object({
    title: Title.describe("the note's title"),
    content: Markdown.describe("the body, as Markdown"),
    folderId: FolderId.optional(),
    folderName: FolderName.optional(),
  }),
  async execute(input, context) {
    const { app, grant } = context;
    const { folder } = await folderScope(context, input);
    if (!folder && grant.folders !== "all" && grant.rootNotes !== true) {
      throw badRequest("folder_required", "Name one of the folders of list_folders: this conversation cannot write at the top level");
    }
    // By id, so a folder shared with the owner is written as its owner's, and a viewer is refused.
    const chosen = folder ? await chooseFolder(app.db, grant.ownerId, { folderId: folder.id }, "write") : null;
    const note = await createNoteFromJson(app, grant.ownerId, {
      title: input.title,
      body: markdownToJson(input.content),
      folder: chosen,
      tags: [],
    });
    return { note: { id: note.id, title: note.title, folderId: note.folderId } };
  },
});

const editNoteTool = defineTool({
  name: "edit_note",
  namespace: "notes",
  source: "native",
  readWrite: "write",
  needs: "os.notes:write",
  route: "updateNote",
  description:
    "Change a note: replace its body with Markdown (the previous body is kept as a snapshot) or append Markdown to its end; optionally rename it.",
  input: z
    .object({
      id: NoteId.optional(),
      noteId: NoteId.optional().describe("the same as id (either may be given)"),
      content: Markdown.describe("Markdown: the new body, or what to add to its end"),
      title: Title.optional().describe("a new title"),
      mode: z.enum(["replace", "append"]).default("replace").describe("replace the body, or append to its end"),
    })
    .refine((input) => input.id !== undefined || input.noteId !== undefined, { message: "give the note's id", path: ["id"] }),
  async execute(input, context) {
    const { app, grant } = context;
    const row = await noteInGrant(context, (input.id ?? input.noteId) as number, "write");
    const addition = markdownToJson(input.content);
    if (input.mode === "replace") await takeSnapshot(app, row, "Before update", true);
    const body = input.mode === "replace" ? addition : appendedBody(await readBody(app.sync, row.uuid), addition);
    await replaceBody(app.sync, grant.ownerId, row.uuid, body);
    await changeMeta(app.sync, row.owner_id, row.uuid, { title: input.title });
    return { note: { id: row.id, title: input.title ?? row.title } };
  },
});

const pinNoteTool = defineTool({
  name: "pin_note",
  namespace: "notes",
  source: "native",
  readWrite: "write",
  needs: "os.notes:write",
  route: "pinNote",
  description: "Pin a note (pinned notes are listed first) or unpin it.",
  input: z.object({ noteId: NoteId, pinned: z.boolean().describe("true to pin, false to unpin") }),
  async execute({ noteId, pinned }, context) {
    const row = await noteInGrant(context, noteId, "write");
    await changeMeta(context.app.sync, row.owner_id, row.uuid, { pinned });
    return { note: { id: row.id, pinned } };
  },
});

export const NOTES_TOOLS: readonly AnyAgentTool[] = [
  searchNotesTool,
  grepNotesTool,
  getNoteContentTool,
  listNotesTool,
  listFoldersTool,
  createNoteTool,
  editNoteTool,
  pinNoteTool,
];
