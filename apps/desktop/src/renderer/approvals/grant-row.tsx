import type { GrantItem } from "../../shared/desktop-api";
import { personLabel } from "../../shared/person-label";
import { clockTime } from "./time-left";

export interface GrantButton {
  readonly label: string;
  /** The action key while it runs (see useAction). */
  readonly key: string;
  onClick(): void;
}

interface GrantRowProps {
  readonly grant: GrantItem;
  readonly buttons: readonly GrantButton[];
  readonly running: string | null;
}

/** One grant: who, which way, until when, and what the owner can do about it. */
export function GrantRow({ grant, buttons, running }: GrantRowProps) {
  const peer = personLabel(grant.peerName, grant.peerPrincipalId);
  return (
    <li className="grant-row">
      <span className="grant-text">{describeGrant(grant, peer)}</span>
      <span className="grant-actions">
        {buttons.map((button) => (
          <button
            key={button.key}
            type="button"
            disabled={running !== null}
            aria-busy={running === button.key}
            aria-label={`${button.label} ${peer}`}
            onClick={button.onClick}
          >
            {button.label}
          </button>
        ))}
      </span>
    </li>
  );
}

/** The sentence for a grant; `peer` is already a display label. */
export function describeGrant(grant: GrantItem, peer: string): string {
  const until = grant.grantExpiresAt ? ` until ${clockTime(grant.grantExpiresAt)}` : "";
  if (grant.status === "pending") {
    return grant.direction === "incoming"
      ? `${peer} asks to send requests to your agent (asked at ${clockTime(grant.requestedAt)})`
      : `You asked to send requests to ${peer}'s agent (waiting for them)`;
  }
  return grant.direction === "incoming"
    ? `${peer} can send requests to your agent${until}`
    : `You can send requests to ${peer}'s agent${until}`;
}
