import type { AppContext } from "../../context";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { announceAccessChange } from "../../shared/access-changes";
import { listFolderShares, shareFolder, unshareFolder } from "./sharing-service";

export function sharingHandlers({ db, sync, shared }: AppContext): RouteHandlers<"shareFolder" | "listFolderShares" | "unshareFolder"> {
  return {
    shareFolder: async ({ input, principal }) => {
      const { share, created: isNew } = await shareFolder(db, principal.userId, input.params.id, input.body);
      // A lowered role takes effect on the grantee's open sync connections now, here and on every other instance.
      if (!isNew) {
        await sync.connections.recheck();
        announceAccessChange(shared);
      }
      const body = { success: true, share, message: `Shared with ${share.username} as ${share.role}` };
      return isNew ? created(body) : body;
    },
    listFolderShares: async ({ input, principal }) => ({
      success: true,
      shares: await listFolderShares(db, principal.userId, input.params.id),
    }),
    unshareFolder: async ({ input, principal }) => {
      await unshareFolder(db, principal.userId, input.params.id, input.params.username);
      await sync.connections.recheck();
      announceAccessChange(shared);
      return { success: true, message: `No longer shared with ${input.params.username}` };
    },
  };
}
