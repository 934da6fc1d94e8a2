import { z } from "zod";
import { MAX_TITLE_LENGTH } from "../documents/limits";
import { Id, IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

export const MAX_NOTE_TITLE_LENGTH = MAX_TITLE_LENGTH;
/** The largest note body accepted, as text (the interface's 10 MB file limit). */
export const MAX_NOTE_CONTENT_BYTES = 10 * 1024 * 1024;
/** JSON escaping can double a body's size; leave room for it and the other fields. */
export const NOTE_BODY_LIMIT = 2 * MAX_NOTE_CONTENT_BYTES + 64 * 1024;

export const NoteListItem = z.object({
  id: z.number().int(),
  uuid: z.string(),
  title: z.string(),
  folderId: z.number().int().nullable(),
  wordCount: z.number().int(),
  pinned: z.boolean(),
  tags: z.array(z.string()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type NoteListItem = z.infer<typeof NoteListItem>;

export const FullNote = NoteListItem.extend({
  docName: z.string().describe("the Yjs document holding the body, for sync clients"),
  content: z.string().describe("the body as HTML"),
  markdown: z.string().describe("the body as Markdown"),
  sizeBytes: z.number().int(),
  shared: z.boolean(),
  role: z.enum(["owner", "editor", "viewer"]),
});

const NoteTitle = z.string().trim().min(1, { error: "must not be empty" }).max(MAX_NOTE_TITLE_LENGTH);
const NoteContent = z.string().refine((s) => Buffer.byteLength(s) <= MAX_NOTE_CONTENT_BYTES, { error: "must be at most 10 MB" });
const Tags = z.array(z.string().trim().min(1).max(100)).max(100);
const NoteIdParams = z.object({ id: IdParam });

/** A folder named by id or by name; `folderName` matching several folders is ambiguous (400). */
const FolderChoice = {
  folderId: Id.nullable().optional().describe("the folder; null or omitted for the root"),
  folderName: z.string().trim().min(1).max(255).optional().describe("a folder's name, if it is unambiguous"),
};

export const noteRoutes = {
  listNotes: defineRoute({
    method: "GET",
    path: "/os/notes",
    category: "notes",
    summary: "Notes in a folder (the root when no folder is named), pinned first, then most recently updated",
    auth: "user",
    scope: "os.notes:read",
    query: z.object({
      folderId: IdParam.optional(),
      folderName: z.string().trim().min(1).max(255).optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
    response: success({
      folder: z.object({ id: z.number().int(), name: z.string() }).nullable(),
      notes: z.array(NoteListItem),
      totalNotes: z.number().int(),
      limited: z.boolean(),
    }),
  }),
  createNote: defineRoute({
    method: "POST",
    path: "/os/notes",
    category: "notes",
    summary: "Create a note from Markdown (or plain text with format 'text')",
    auth: "user",
    scope: "os.notes:write",
    bodyLimit: NOTE_BODY_LIMIT,
    invalidStatus: 422,
    successStatuses: [201],
    body: z.object({
      title: NoteTitle,
      content: NoteContent,
      format: z.enum(["markdown", "text"]).default("markdown"),
      tags: Tags.optional(),
      ...FolderChoice,
    }),
    response: success({
      result: z.object({
        note: z.object({ id: z.number().int(), uuid: z.string(), title: z.string(), folderId: z.number().int().nullable() }),
      }),
      message: z.string(),
    }),
  }),
  getNote: defineRoute({
    method: "GET",
    path: "/os/notes/:id",
    category: "notes",
    summary: "A note with its body as HTML and Markdown",
    auth: "user",
    scope: "os.notes:read",
    params: NoteIdParams,
    response: success({ note: FullNote }),
  }),
  updateNote: defineRoute({
    method: "PATCH",
    path: "/os/notes/:id",
    category: "notes",
    summary:
      "Change a note's title and/or body (HTML; content without block-level markup is read as Markdown); snapshots the current content first",
    auth: "user",
    scope: "os.notes:write",
    params: NoteIdParams,
    bodyLimit: NOTE_BODY_LIMIT,
    body: z.object({ title: NoteTitle.optional(), content: NoteContent.optional(), tags: Tags.optional() }),
    response: success({ message: z.string() }),
  }),
  copyNote: defineRoute({
    method: "POST",
    path: "/os/notes/:id/copy",
    category: "notes",
    summary: "Copy a note into a folder (default: the source's); snapshots are not carried over",
    auth: "user",
    scope: "os.notes:write",
    params: NoteIdParams,
    successStatuses: [201],
    body: z.object(FolderChoice).optional(),
    response: success({
      result: z.object({
        note: z.object({ id: z.number().int(), uuid: z.string(), title: z.string(), folderId: z.number().int().nullable() }),
      }),
      message: z.string(),
    }),
  }),
  moveNote: defineRoute({
    method: "POST",
    path: "/os/notes/:id/move",
    category: "notes",
    summary: "Move a note to a folder (folderId null: the root)",
    auth: "user",
    scope: "os.notes:write",
    params: NoteIdParams,
    body: z.object(FolderChoice).refine((b) => b.folderId !== undefined || b.folderName !== undefined, {
      error: "folderId (a number or null) is required",
      path: ["folderId"],
    }),
    response: success({ message: z.string() }),
  }),
  pinNote: defineRoute({
    method: "POST",
    path: "/os/notes/:id/pin",
    category: "notes",
    summary: "Pin or unpin a note",
    auth: "user",
    scope: "os.notes:write",
    params: NoteIdParams,
    body: z.object({ pinned: z.boolean() }),
    response: success({ message: z.string() }),
  }),
  notesSummary: defineRoute({
    method: "GET",
    path: "/notes/summary",
    category: "notes",
    summary: "The most recently updated notes with a short summary each, and the same as HTML",
    auth: "user",
    scope: "os.notes:read",
    query: z.object({ limit: z.coerce.number().int().min(1).max(20).default(5) }),
    response: success({
      notes: z.array(
        z.object({
          id: z.number().int(),
          title: z.string(),
          summary: z.string(),
          updatedAt: Timestamp,
          relativeTime: z.string(),
          pinned: z.boolean(),
        }),
      ),
      notesSummary: z.string().describe("HTML"),
    }),
  }),
  memorySearch: defineRoute({
    method: "POST",
    path: "/os/memory/search",
    category: "memory",
    summary: "Search the agent's memory: the notes under the root folder Memory",
    auth: "user",
    scope: "os.memory:read",
    body: z.object({
      query: z.string().trim().min(1).max(500),
      maxResults: z.number().int().min(1).max(50).optional(),
      limit: z.number().int().min(1).max(50).optional().describe("alias of maxResults"),
    }),
    response: success({
      result: z.object({
        results: z.array(
          z.object({ title: z.string(), snippet: z.string(), path: z.string(), noteId: z.number().int(), score: z.number() }),
        ),
      }),
    }),
  }),
  searchNotes: defineRoute({
    method: "POST",
    path: "/os/notes/search",
    category: "notes",
    summary:
      "Ranked search for questions or keywords over titles, headings and bodies (and by meaning, with an embedding model), with a snippet of each match",
    auth: "user",
    scope: "os.notes:read",
    body: z.object({
      query: z.string().trim().min(1).max(500),
      limit: z.number().int().min(1).max(100).default(20),
    }),
    response: success({
      results: z.array(
        z.object({
          id: z.number().int(),
          title: z.string(),
          snippet: z.string(),
          score: z.number(),
          folderId: z.number().int().nullable(),
        }),
      ),
    }),
  }),
  grepNotes: defineRoute({
    method: "POST",
    path: "/os/notes/grep",
    category: "notes",
    summary: "Find lines in notes matching a literal string or a regular expression",
    auth: "user",
    scope: "os.notes:read",
    body: z.object({
      pattern: z.string().min(1).max(1000),
      mode: z.enum(["literal", "regex"]).default("literal"),
      caseSensitive: z.boolean().default(false),
      contextBefore: z.number().int().min(0).max(100).default(0),
      contextAfter: z.number().int().min(0).max(100).default(0),
      ...FolderChoice,
    }),
    response: success({
      results: z.array(
        z.object({
          noteId: z.number().int(),
          title: z.string(),
          matches: z.array(
            z.object({
              line: z.number().int(),
              text: z.string(),
              match: z.string(),
              before: z.array(z.string()),
              after: z.array(z.string()),
            }),
          ),
        }),
      ),
      summary: z.object({
        notesScanned: z.number().int(),
        notesMatched: z.number().int(),
        truncated: z.boolean().describe("whether anything was left out or shortened; truncatedBy says what"),
        truncatedBy: z
          .array(z.enum(["matchesPerNote", "lineLength", "answerSize"]))
          .describe(
            "matchesPerNote: a note had more than 100 matching lines; lineLength: lines over 1,000 characters were cut around the match; answerSize: matching stopped once the answer held about 1,000,000 characters of lines",
          ),
      }),
    }),
  }),
} as const;
