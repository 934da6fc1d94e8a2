import { z } from "zod";
import { Id, IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

export const SnapshotSummary = z.object({
  versionId: z.number().int().describe("legacy primary key"),
  seq: z.number().int().describe("1, 2, 3… per note; the preferred address"),
  noteId: z.number().int(),
  label: z.string().nullable(),
  createdAt: Timestamp,
  wordCount: z.number().int(),
});

export const SnapshotWithContent = SnapshotSummary.extend({
  content: z.string().describe("the body as HTML"),
  markdown: z.string(),
});

const NoteParam = z.object({ noteId: IdParam });

export const snapshotRoutes = {
  listSnapshots: defineRoute({
    method: "GET",
    path: "/os/snapshots/:noteId",
    category: "snapshots",
    summary: "A note's version history, newest first",
    auth: "user",
    scope: "os.snapshots:read",
    params: NoteParam,
    query: z.object({ limit: z.coerce.number().int().min(1).max(100).default(50) }),
    response: success({ noteId: z.number().int(), snapshots: z.array(SnapshotSummary), total: z.number().int() }),
  }),
  createSnapshot: defineRoute({
    method: "POST",
    path: "/os/snapshots/:noteId",
    category: "snapshots",
    summary: "Save the note's current content as a snapshot",
    auth: "user",
    scope: "os.snapshots:write",
    alsoRequires: ["os.notes:read"],
    params: NoteParam,
    successStatuses: [201],
    body: z.object({ label: z.string().trim().max(200).optional() }).optional(),
    response: success({ ...SnapshotSummary.shape, message: z.string() }),
  }),
  getSnapshotBySeq: defineRoute({
    method: "GET",
    path: "/os/snapshots/:noteId/seq/:seq",
    category: "snapshots",
    summary: "One snapshot with its content, by sequence number",
    auth: "user",
    scope: "os.snapshots:read",
    params: z.object({ noteId: IdParam, seq: IdParam }),
    response: success({ snapshot: SnapshotWithContent }),
  }),
  getSnapshotByVersion: defineRoute({
    method: "GET",
    path: "/os/snapshots/:noteId/:versionId",
    category: "snapshots",
    summary: "One snapshot with its content, by legacy version id",
    auth: "user",
    scope: "os.snapshots:read",
    params: z.object({ noteId: IdParam, versionId: IdParam }),
    response: success({ snapshot: SnapshotWithContent }),
  }),
  restoreSnapshot: defineRoute({
    method: "POST",
    path: "/os/snapshots/:noteId/restore",
    category: "snapshots",
    summary: "Make the note's content equal to a snapshot (by seq, or versionId), after snapshotting the current content",
    auth: "user",
    scope: "os.snapshots:write",
    alsoRequires: ["os.notes:write"],
    params: NoteParam,
    body: z
      .object({ seq: Id.optional(), versionId: Id.optional() })
      .refine((b) => b.seq !== undefined || b.versionId !== undefined, { error: "seq (or versionId) is required", path: ["seq"] }),
    response: success({ restoredSeq: z.number().int(), backupSeq: z.number().int(), message: z.string() }),
  }),
} as const;
