import type { SyncStatus } from "../../shared/desktop-api";
import { useHostStatus } from "./host-status";

function describe(sync: SyncStatus): string {
  switch (sync.state) {
    case "synced":
      return "Synced";
    case "syncing":
      return sync.pending > 0 ? `Syncing ${sync.pending}` : "Syncing";
    case "offline":
      return sync.pending > 0 ? `Offline · ${sync.pending} to sync` : "Offline";
    case "error":
      return "Sync error";
    case "signed_out":
      return "Not syncing";
  }
}

/** Whether everything reached the server, shown in the header at all times. */
export function SyncIndicator() {
  const { status, error } = useHostStatus();
  const state = error ? "error" : (status?.sync.state ?? "unknown");
  const label = error ? "Host unavailable" : status ? describe(status.sync) : "…";
  const detail = error ?? status?.sync.message ?? undefined;
  return (
    <output className="sync-indicator" data-state={state} data-testid="sync-status" title={detail} aria-live="polite">
      <span className="sync-dot" aria-hidden="true" />
      {label}
    </output>
  );
}
