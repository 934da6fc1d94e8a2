import { countOf } from "@tandem/core";
import type { AppContext } from "../../context";
import { created, jsonWithField } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { createFolder, deleteFolder, listFoldersJson, updateFolder } from "./folders-service";

export function folderHandlers({
  db,
  database,
  sync,
}: AppContext): RouteHandlers<"listFolders" | "createFolder" | "updateFolder" | "deleteFolder"> {
  return {
    listFolders: async ({ input, principal }) => {
      const parentId = input.query.parentId;
      const parent = parentId === "root" || parentId === "null" ? "root" : parentId;
      return jsonWithField(
        { success: true },
        "folders",
        await listFoldersJson(database.reads, principal.userId, parent, database.readsNow),
      );
    },
    createFolder: async ({ input, principal }) => {
      const result = await createFolder(db, sync, principal.userId, input.body);
      const body = { success: true, ...result };
      return result.mode === "created" ? created(body) : body;
    },
    updateFolder: async ({ input, principal }) => {
      const row = await updateFolder(db, sync, principal.userId, input.params.id, input.body);
      return { success: true, folder: { id: row.id, name: row.name, parentId: row.parent_id }, message: "Folder updated" };
    },
    deleteFolder: async ({ input, principal }) => {
      const moved = await deleteFolder(db, sync, principal.userId, input.params.id);
      const where = moved.movedTo === null ? "the top level" : `folder ${moved.movedTo}`;
      return {
        success: true,
        ...moved,
        message: `Folder moved to the Trash; ${countOf(moved.movedNotes, "note")} and ${countOf(moved.movedFolders, "folder")} moved to ${where}`,
      };
    },
  };
}
