import type { SyncStatus } from "../../shared/desktop-api";
import type { ReplicationProgress } from "./replicator";

/**
 * The sync state the app shows, from replication's progress (null when signed out):
 * - `error` while the server refuses the workspace or the todos (the message says why);
 * - `offline` while the socket to the server is down (`pending`: documents with local changes);
 * - `syncing` while any document is behind the server or has unconfirmed changes (`pending`: how many);
 * - `synced` otherwise.
 */
export function syncStatusOf(progress: ReplicationProgress | null): SyncStatus {
  if (!progress) return { state: "signed_out", pending: 0, documents: 0, message: null };
  const { documents } = progress;
  if (progress.error) return { state: "error", pending: progress.unsynced, documents, message: progress.error };
  if (!progress.connected) {
    return {
      state: "offline",
      pending: progress.unsynced,
      documents,
      message: "The server cannot be reached; changes are kept on this computer",
    };
  }
  if (progress.behind > 0) return { state: "syncing", pending: progress.behind, documents, message: null };
  return { state: "synced", pending: 0, documents, message: null };
}
