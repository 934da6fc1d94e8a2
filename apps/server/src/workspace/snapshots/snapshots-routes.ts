import type { AppContext } from "../../context";
import { created } from "../../http/reply";
import type { RouteHandlers } from "../../http/router";
import { getAccessibleNote } from "../notes/notes-service";
import { getSnapshot, listSnapshots, restoreSnapshot, takeSnapshot } from "./snapshots-service";

type SnapshotRouteId = "listSnapshots" | "createSnapshot" | "getSnapshotBySeq" | "getSnapshotByVersion" | "restoreSnapshot";

export function snapshotHandlers(context: AppContext): RouteHandlers<SnapshotRouteId> {
  const { db } = context;
  return {
    listSnapshots: async ({ input, principal }) => ({
      success: true,
      ...(await listSnapshots(db, principal.userId, input.params.noteId, input.query.limit)),
    }),
    createSnapshot: async ({ input, principal }) => {
      const { row: note } = await getAccessibleNote(db, principal.userId, input.params.noteId, "write");
      const snapshot = await takeSnapshot(context, note, input.body?.label || null, false);
      return created({ success: true, ...snapshot, message: `Saved snapshot ${snapshot.seq}` });
    },
    getSnapshotBySeq: async ({ input, principal }) => ({
      success: true,
      snapshot: await getSnapshot(db, principal.userId, input.params.noteId, { seq: input.params.seq }),
    }),
    getSnapshotByVersion: async ({ input, principal }) => ({
      success: true,
      snapshot: await getSnapshot(db, principal.userId, input.params.noteId, { versionId: input.params.versionId }),
    }),
    restoreSnapshot: async ({ input, principal }) => {
      const result = await restoreSnapshot(context, principal.userId, input.params.noteId, input.body);
      return {
        success: true,
        ...result,
        message: `Restored snapshot ${result.restoredSeq}; the previous content is snapshot ${result.backupSeq}`,
      };
    },
  };
}
