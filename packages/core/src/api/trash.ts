import { z } from "zod";
import { isUuid } from "../documents/names";
import { IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

const Uuid = z.string().refine(isUuid, { error: "must be a lowercase uuid" });

export const TrashedItem = z.object({
  uuid: z.string(),
  kind: z.enum(["note", "folder"]),
  title: z.string().describe("a note's title or a folder's name"),
  trashedAt: Timestamp,
  deleteAfter: Timestamp.describe("when the Trash deletes it for good"),
});
export type TrashedItem = z.infer<typeof TrashedItem>;

/** The Trash of the caller's own workspace: notes and folders are kept there 30 days, by uuid. */
export const trashRoutes = {
  trashNote: defineRoute({
    method: "DELETE",
    path: "/os/notes/:id",
    category: "notes",
    summary: "Move a note to the Trash (restore it within 30 days with POST /os/trash/{uuid}/restore)",
    auth: "user",
    scope: "os.notes:write",
    params: z.object({ id: IdParam }),
    response: success({ uuid: z.string(), trashedAt: Timestamp, message: z.string() }),
  }),
  listTrash: defineRoute({
    method: "GET",
    path: "/os/trash",
    category: "notes",
    summary: "Notes and folders in the Trash, most recently trashed first",
    auth: "user",
    scope: "os.notes:read",
    response: success({ items: z.array(TrashedItem) }),
  }),
  restoreFromTrash: defineRoute({
    method: "POST",
    path: "/os/trash/:uuid/restore",
    category: "notes",
    summary: "Take a note or folder out of the Trash (to the top level if its folder is gone)",
    auth: "user",
    scope: "os.notes:write",
    params: z.object({ uuid: Uuid }),
    response: success({
      kind: z.enum(["note", "folder"]),
      id: z
        .number()
        .int()
        .nullable()
        .describe("its numeric id (a new one); null if its uuid belongs to another workspace, which the views never list"),
      message: z.string(),
    }),
  }),
  deleteFromTrash: defineRoute({
    method: "DELETE",
    path: "/os/trash/:uuid",
    category: "notes",
    summary: "Delete a note or folder in the Trash for good",
    auth: "user",
    scope: "os.notes:write",
    params: z.object({ uuid: Uuid }),
    response: success({ message: z.string() }),
  }),
} as const;
