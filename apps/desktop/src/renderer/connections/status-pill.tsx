import type { ConnectionStatusWords } from "../../shared/desktop-api";

/** A connection's status as a coloured word; the detail (what to do, what went wrong) follows as text. */
export function StatusPill({ state }: { state: ConnectionStatusWords }) {
  return (
    <span className="status-pill" data-status={state.status}>
      {state.label}
    </span>
  );
}
