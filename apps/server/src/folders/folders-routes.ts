import type { AppContext } from "../context";
import { created } from "../http/reply";
import type { RouteHandlers } from "../http/router";
import { createFolder, listFolders } from "./folders-service";

export function folderHandlers({ db, sync }: AppContext): RouteHandlers<"listFolders" | "createFolder"> {
  return {
    listFolders: async ({ input, principal }) => {
      const parentId = input.query.parentId;
      const parent = parentId === "root" || parentId === "null" ? "root" : parentId;
      return { success: true, folders: await listFolders(db, principal.userId, parent) };
    },
    createFolder: async ({ input, principal }) => {
      const result = await createFolder(db, sync, principal.userId, input.body);
      const body = { success: true, ...result };
      return result.mode === "created" ? created(body) : body;
    },
  };
}
