import type { HostStatus } from "../../shared/desktop-api";
import { IS_MAC, keyLabel } from "../notes/shortcuts";
import { useHostStatus } from "./host-status";
import { SECTIONS, type SectionId } from "./sections";

/** A count worth the owner's attention beside a section's name, from the host's status. */
function badgeFor(section: SectionId, status: HostStatus | null): string | null {
  if (!status) return null;
  // Everything waiting for the owner's answer: tool calls, agent-access and grant requests.
  const waiting = status.approvalsPending + status.requestsPending;
  if (section === "approvals" && waiting > 0) return String(waiting);
  return null;
}

export function SectionNav({ current, onSelect }: { current: SectionId; onSelect: (section: SectionId) => void }) {
  const { status } = useHostStatus();
  return (
    <nav className="sidebar" aria-label="Sections">
      <ul>
        {SECTIONS.map((section, index) => {
          const badge = badgeFor(section.id, status);
          return (
            <li key={section.id}>
              <button
                type="button"
                aria-current={section.id === current ? "page" : undefined}
                aria-keyshortcuts={`${IS_MAC ? "Meta" : "Control"}+${index + 1}`}
                title={`${section.title} (${keyLabel(`Mod+${index + 1}`)})`}
                onClick={() => onSelect(section.id)}
              >
                <span>{section.title}</span>
                {badge && (
                  <span className="badge" role="img" aria-label={`${badge} waiting`}>
                    {badge}
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
