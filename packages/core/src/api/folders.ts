import { z } from "zod";
import { folderNameProblem, splitFolderPath } from "../folder-names";
import { Id, IdParam, success, Timestamp } from "./common";
import { defineRoute } from "./route";

export const FolderRole = z.enum(["owner", "editor", "viewer"]);

export const Folder = z.object({
  id: z.number().int(),
  name: z.string(),
  parentId: z.number().int().nullable(),
  icon: z.string().nullable(),
  fileCount: z.number().int(),
  createdAt: Timestamp,
  shared: z.boolean().describe("true when the folder belongs to someone else and is shared with the caller"),
  role: FolderRole.describe("the caller's role on the folder"),
});
export type Folder = z.infer<typeof Folder>;

export const FolderShare = z.object({
  folderId: z.number().int(),
  userId: z.number().int(),
  username: z.string(),
  role: z.enum(["viewer", "editor"]),
  createdAt: Timestamp,
});

export const FolderName = z.string().superRefine((name, ctx) => {
  const problem = folderNameProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

export const FolderPath = z
  .string()
  .max(16_384)
  .superRefine((path, ctx) => {
    const split = splitFolderPath(path);
    if ("problem" in split) ctx.addIssue({ code: "custom", message: split.problem });
  });

export const CreateFolderBody = z
  .object({
    name: FolderName.optional(),
    path: FolderPath.optional().describe("nested path such as 'Projects/2026'; folders are created as needed"),
    parentId: Id.nullable().optional().describe("parent folder; omitted or null for the root"),
  })
  .superRefine((body, ctx) => {
    if (body.name !== undefined && body.path !== undefined) {
      ctx.addIssue({ code: "custom", path: ["name"], message: "give either name or path, not both" });
    } else if (body.name === undefined && body.path === undefined) {
      ctx.addIssue({ code: "custom", path: ["name"], message: "name or path is required" });
    }
  });

export const folderRoutes = {
  listFolders: defineRoute({
    method: "GET",
    path: "/os/folders",
    category: "folders",
    summary: "List folders: all of them, or the children of parentId ('root' for top level)",
    auth: "user",
    scope: "os.notes:read",
    query: z.object({
      parentId: z.union([z.enum(["root", "null"]), IdParam], { error: "must be a folder id, or 'root' for top-level folders" }).optional(),
    }),
    response: success({ folders: z.array(Folder) }),
  }),
  createFolder: defineRoute({
    method: "POST",
    path: "/os/folders",
    category: "folders",
    summary: "Create a folder by name or nested path; an existing one answers 200 with mode 'existing'",
    auth: "user",
    scope: "os.notes:write",
    body: CreateFolderBody,
    successStatuses: [201, 200],
    response: success({
      mode: z.enum(["created", "existing"]),
      path: z.string(),
      folder: z.object({ id: z.number().int(), name: z.string(), parentId: z.number().int().nullable() }),
      createdSegments: z.array(z.string()),
      message: z.string(),
    }),
  }),
  updateFolder: defineRoute({
    method: "PATCH",
    path: "/os/folders/:id",
    category: "folders",
    summary: "Rename a folder and/or move it under another (parentId null: the top level)",
    auth: "user",
    scope: "os.notes:write",
    params: z.object({ id: IdParam }),
    body: z
      .object({ name: FolderName.optional(), parentId: Id.nullable().optional() })
      .refine((b) => b.name !== undefined || b.parentId !== undefined, { error: "give name and/or parentId", path: ["name"] }),
    response: success({
      folder: z.object({ id: z.number().int(), name: z.string(), parentId: z.number().int().nullable() }),
      message: z.string(),
    }),
  }),
  deleteFolder: defineRoute({
    method: "DELETE",
    path: "/os/folders/:id",
    category: "folders",
    summary: "Move a folder to the Trash; its notes and subfolders move up to its parent, nothing is lost",
    auth: "user",
    scope: "os.notes:write",
    params: z.object({ id: IdParam }),
    response: success({
      movedNotes: z.number().int(),
      movedFolders: z.number().int(),
      movedTo: z.number().int().nullable().describe("the parent folder that received them; null for the top level"),
      message: z.string(),
    }),
  }),
  shareFolder: defineRoute({
    method: "POST",
    path: "/os/folders/:id/shares",
    category: "folders",
    summary: "Share a folder and everything in it with another user as viewer or editor (again: change the role)",
    auth: "user",
    scope: "os.notes:write",
    params: z.object({ id: IdParam }),
    successStatuses: [201, 200],
    body: z.object({ username: z.string().trim().min(1).max(64), role: z.enum(["viewer", "editor"]) }),
    response: success({ share: FolderShare, message: z.string() }),
  }),
  listFolderShares: defineRoute({
    method: "GET",
    path: "/os/folders/:id/shares",
    category: "folders",
    summary: "Who a folder is shared with",
    auth: "user",
    scope: "os.notes:read",
    params: z.object({ id: IdParam }),
    response: success({ shares: z.array(FolderShare) }),
  }),
  unshareFolder: defineRoute({
    method: "DELETE",
    path: "/os/folders/:id/shares/:username",
    category: "folders",
    summary: "Stop sharing a folder with a user",
    auth: "user",
    scope: "os.notes:write",
    params: z.object({ id: IdParam, username: z.string().min(1).max(64) }),
    response: success({ message: z.string() }),
  }),
} as const;
