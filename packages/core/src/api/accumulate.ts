import { z } from "zod";
import { success } from "./common";
import { defineRoute } from "./route";

/** At most this many files and texts (creates and updates) in one request. */
export const MAX_ACCUMULATE_ENTRIES = 50;
/** The whole request; a single file over 10 MB is reported in `errors`, not refused. */
export const ACCUMULATE_BODY_LIMIT = 64 * 1024 * 1024;

const Path = z.string().trim().min(1).max(4096);

export const AccumulateBody = z
  .object({
    files: z.array(z.object({ path: Path, content: z.string(), message: z.string().max(500).optional() })).optional(),
    texts: z
      .array(z.object({ title: z.string().trim().min(1).max(500), content: z.string(), folder: z.string().trim().max(4096).optional() }))
      .optional(),
    delete: z
      .array(z.object({ path: Path }))
      .max(500)
      .optional(),
    folders: z.object({ create: z.array(Path).max(500).optional(), delete: z.array(Path).max(500).optional() }).optional(),
  })
  .superRefine((body, ctx) => {
    const entries = (body.files?.length ?? 0) + (body.texts?.length ?? 0);
    if (entries > MAX_ACCUMULATE_ENTRIES) {
      ctx.addIssue({
        code: "custom",
        path: ["files"],
        message: `at most ${MAX_ACCUMULATE_ENTRIES} files and texts per request (got ${entries})`,
      });
    }
    if (entries === 0 && !body.delete?.length && !body.folders?.create?.length && !body.folders?.delete?.length) {
      ctx.addIssue({
        code: "custom",
        path: ["files"],
        message: "give at least one of files, texts, delete, folders.create or folders.delete",
      });
    }
  });

export const accumulateRoutes = {
  accumulate: defineRoute({
    method: "POST",
    path: "/accumulate",
    category: "workspace",
    summary: "Import files and texts into notes (same path again: update, with versions), delete notes, create or delete folders",
    auth: "user",
    scope: "os.notes:write",
    bodyLimit: ACCUMULATE_BODY_LIMIT,
    body: AccumulateBody,
    response: success({
      created: z.number().int(),
      updated: z.number().int(),
      deleted: z.number().int(),
      skipped: z.number().int(),
      errors: z.array(z.object({ path: z.string(), error: z.string() })),
      versions: z.array(z.object({ file: z.string(), from: z.number().int(), to: z.number().int(), message: z.string() })),
      foldersCreated: z.array(z.string()),
      workspace: z.object({ totalFiles: z.number().int(), totalSizeBytes: z.number().int() }),
      message: z.string(),
    }),
  }),
} as const;
