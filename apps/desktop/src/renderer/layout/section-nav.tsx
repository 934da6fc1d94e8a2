import type { HostStatus } from "../../shared/desktop-api";
import { useHeartbeatSession } from "../heartbeat/heartbeat-session";
import { IS_MAC, keyLabel } from "../notes/shortcuts";
import { useHostStatus } from "./host-status";
import { SECTIONS, type SectionId } from "./sections";

interface Badge {
  readonly text: string;
  /** What it says, for assistive technology. */
  readonly label: string;
  readonly kind: "count" | "unsaved";
}

/**
 * Something worth the owner's attention beside a section's name: what waits for their answer, the
 * agent's unread messages, edits not saved yet.
 */
function badgeFor(section: SectionId, status: HostStatus | null, unsaved: boolean): Badge | null {
  if (section === "heartbeat" && unsaved) return { text: "•", label: "unsaved changes", kind: "unsaved" };
  if (!status) return null;
  // Everything waiting for the owner's answer: tool calls, agents' paused actions, agent-access and grant requests.
  const waiting = status.approvalsPending + status.escalationsPending + status.requestsPending;
  if (section === "approvals" && waiting > 0) return { text: String(waiting), label: `${waiting} waiting`, kind: "count" };
  if (section === "inbox" && status.inboxUnread > 0) {
    return { text: String(status.inboxUnread), label: `${status.inboxUnread} unread`, kind: "count" };
  }
  if (section === "agent" && status.agentUnread > 0) {
    return { text: String(status.agentUnread), label: `${status.agentUnread} unread`, kind: "count" };
  }
  return null;
}

export function SectionNav({ current, onSelect }: { current: SectionId; onSelect: (section: SectionId) => void }) {
  const { status } = useHostStatus();
  const { unsaved } = useHeartbeatSession();
  return (
    <nav className="sidebar" aria-label="Sections">
      <ul>
        {SECTIONS.map((section, index) => {
          const badge = badgeFor(section.id, status, unsaved);
          return (
            <li key={section.id}>
              <button
                type="button"
                aria-current={section.id === current ? "page" : undefined}
                aria-keyshortcuts={index < 9 ? `${IS_MAC ? "Meta" : "Control"}+${index + 1}` : undefined}
                title={index < 9 ? `${section.title} (${keyLabel(`Mod+${index + 1}`)})` : section.title}
                onClick={() => onSelect(section.id)}
              >
                <span>{section.title}</span>
                {badge && (
                  <span className="badge" data-kind={badge.kind} role="img" aria-label={badge.label}>
                    {badge.text}
                  </span>
                )}
              </button>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
