import type { SyncStatus } from "../../shared/desktop-api";
import type { SyncFacet } from "../facets";
import { notBuilt } from "../facets";
import type { HostContext, SyncService } from "../host-context";

export interface SyncHandle extends SyncService {
  readonly facet: SyncFacet;
  close(): Promise<void>;
}

/** Starts the local sync hub and replication with the server. Stub until they are built. */
export async function startSync(_context: HostContext): Promise<SyncHandle> {
  const status: SyncStatus = { state: "signed_out", pending: 0, documents: 0, message: null };
  return {
    status: () => status,
    unsyncedDocuments: () => 0,
    facet: { getLocalSync: async () => notBuilt("Local sync") },
    close: async () => {},
  };
}
