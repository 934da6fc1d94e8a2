import type { WorkspaceFacet } from "../facets";
import { notBuilt } from "../facets";
import type { HostContext, SyncService } from "../host-context";

/** Search and snapshots: the server's when online, the local documents' when not. Stub until built. */
export function createWorkspaceFacet(_context: HostContext, _sync: SyncService): WorkspaceFacet {
  return {
    searchNotes: async () => notBuilt("Search"),
    listSnapshots: async () => notBuilt("Snapshots"),
    getSnapshot: async () => notBuilt("Snapshots"),
    createSnapshot: async () => notBuilt("Snapshots"),
    restoreSnapshot: async () => notBuilt("Snapshots"),
  };
}
