import { useId, useState } from "react";
import type { AccessLevel, AccessRequestItem, AgentAccessChoice } from "../../shared/desktop-api";
import { clockTime } from "./time-left";

const LEVELS: readonly { readonly value: AccessLevel; readonly label: string }[] = [
  { value: "none", label: "Nothing" },
  { value: "read", label: "Read" },
  { value: "write", label: "Read and edit" },
];

const AREAS: readonly { readonly key: keyof AgentAccessChoice; readonly label: string; readonly noun: string }[] = [
  { key: "notes", label: "Your notes", noun: "notes" },
  { key: "todos", label: "Your todos", noun: "todos" },
];

/** What accepting gives, in one sentence: "alice's agent may ask your agent for help, and read your notes." */
export function describeAccess(name: string, access: AgentAccessChoice): string {
  const reaches = AREAS.filter((area) => access[area.key] !== "none").map(
    (area) => `${access[area.key] === "write" ? "read and edit" : "read"} your ${area.noun}`,
  );
  const base = `${name}'s agent may ask your agent for help`;
  if (reaches.length === 0) return `${base}, and reach nothing of yours.`;
  return `${base}, and ${reaches.join(" and ")}.`;
}

interface AccessRequestCardProps {
  readonly request: AccessRequestItem;
  readonly busy: boolean;
  readonly running: string | null;
  readonly onAnswer: (action: "accept" | "decline", access: AgentAccessChoice) => void;
}

/**
 * Someone asks for agent access (the handshake). The owner chooses, in words, what that person's
 * agent may reach, reads the sentence it makes, and accepts or declines.
 */
export function AccessRequestCard({ request, busy, running, onAnswer }: AccessRequestCardProps) {
  const [access, setAccess] = useState<AgentAccessChoice>({ notes: "none", todos: "none" });
  const headingId = useId();
  const who = request.fromName === request.fromUsername ? request.fromName : `${request.fromName} (@${request.fromUsername})`;
  return (
    <li className="access-request" aria-labelledby={headingId}>
      <p id={headingId} className="access-request-title">
        <strong dir="auto">{who}</strong> asks for agent access <span className="muted">(asked at {clockTime(request.createdAt)})</span>
      </p>
      <div className="access-choices">
        {AREAS.map((area) => (
          <label key={area.key} className="inline-field">
            <span>{area.label}</span>
            <select
              value={access[area.key]}
              disabled={busy}
              onChange={(event) => setAccess((current) => ({ ...current, [area.key]: event.target.value as AccessLevel }))}
            >
              {LEVELS.map((level) => (
                <option key={level.value} value={level.value}>
                  {level.label}
                </option>
              ))}
            </select>
          </label>
        ))}
      </div>
      <p className="access-summary" dir="auto">
        {describeAccess(request.fromName, access)} Every tool call still waits for you here.
      </p>
      <div className="grant-actions">
        {(["accept", "decline"] as const).map((action) => (
          <button
            key={action}
            type="button"
            className={action === "accept" ? "primary" : undefined}
            disabled={busy}
            aria-busy={running === `${action}:access:${request.requestId}`}
            aria-label={`${action === "accept" ? "Accept" : "Decline"} ${request.fromName}'s access request`}
            onClick={() => onAnswer(action, access)}
          >
            {action === "accept" ? "Accept" : "Decline"}
          </button>
        ))}
      </div>
    </li>
  );
}
