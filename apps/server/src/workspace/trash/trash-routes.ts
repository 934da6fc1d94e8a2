import type { trashRoutes } from "@tandem/core";
import type { AppContext } from "../../context";
import type { RouteHandlers } from "../../http/router";
import { deleteTrashedForever, listTrash, moveNoteToTrash, restoreTrashed, trashSweeper } from "./trash-service";

export function trashHandlers(context: AppContext): RouteHandlers<keyof typeof trashRoutes> {
  context.maintenance.add("trash.empty-expired", trashSweeper(context));
  return {
    trashNote: async ({ input, principal }) => {
      const trashed = await moveNoteToTrash(context, principal.userId, input.params.id);
      return { success: true, ...trashed, message: "Note moved to the Trash" };
    },
    listTrash: async ({ principal }) => ({ success: true, items: await listTrash(context, principal.userId) }),
    restoreFromTrash: async ({ input, principal }) => {
      const restored = await restoreTrashed(context, principal.userId, input.params.uuid);
      return { success: true, ...restored, message: `Restored the ${restored.kind}` };
    },
    deleteFromTrash: async ({ input, principal }) => {
      await deleteTrashedForever(context, principal.userId, input.params.uuid);
      return { success: true, message: "Deleted for good" };
    },
  };
}
