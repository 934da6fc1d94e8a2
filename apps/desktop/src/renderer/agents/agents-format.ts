import type { ManagedAgentItem, ManagedAgentRunItem, ToolDecision } from "../../shared/desktop-api";

/** The model aliases every server knows; an agent may also name a configured model id. */
export const MODEL_ALIASES = ["default", "fast", "smart", "local"] as const;

export const DECISION_WORDS: Record<ToolDecision, string> = {
  allow: "Allow",
  ask: "Ask me",
  deny: "Deny",
};

const STATUS_WORDS: Record<string, string> = {
  running: "Running",
  requires_action: "Waiting for your approval",
  completed: "Done",
  failed: "Failed",
  stopped: "Stopped",
};

const SOURCE_WORDS: Record<string, string> = {
  runs: "asked directly",
  agent_message: "asked by message",
  a2a: "asked over A2A",
};

/** A run's status in words; one this app does not know is shown by its name. */
export function runStatusWords(run: Pick<ManagedAgentRunItem, "status">): string {
  return STATUS_WORDS[run.status] ?? run.status;
}

/** How a run was asked, in words. */
export function runSourceWords(run: Pick<ManagedAgentRunItem, "source" | "fromAnotherPerson">): string {
  const how = SOURCE_WORDS[run.source] ?? run.source;
  return run.fromAnotherPerson ? `${how}, by another person` : how;
}

/** What an agent may reach, in one line: "Notes: 2 folders (read) · Todos: read, create". */
export function grantWords(agent: Pick<ManagedAgentItem, "grant">, folderName: (id: number) => string | undefined): string {
  const { notesAccess, todoAccess } = agent.grant;
  let notes = "Notes: none";
  if (notesAccess.scope === "all") notes = `Notes: all your folders (${notesAccess.access})`;
  if (notesAccess.scope === "folders") {
    const names = notesAccess.folderIds.map((id) => folderName(id) ?? `folder ${id}`);
    notes = `Notes: ${names.length === 0 ? "no folder" : names.join(", ")} (${notesAccess.access})`;
  }
  const todoParts = [todoAccess.read ? "read" : null, todoAccess.create ? "create" : null].filter(Boolean);
  const todos = `Todos: ${todoParts.length === 0 ? "none" : todoParts.join(", ")}`;
  return `${notes} · ${todos}`;
}

/** The tools a policy does not simply allow, in words: "Ask me: create_todo · Deny: create_note". */
export function policyWords(agent: Pick<ManagedAgentItem, "toolPolicy">): string {
  const by = (decision: ToolDecision) =>
    Object.entries(agent.toolPolicy)
      .filter(([, value]) => value === decision)
      .map(([tool]) => tool)
      .sort();
  const parts = (["ask", "deny"] as const).flatMap((decision) => {
    const tools = by(decision);
    return tools.length > 0 ? [`${DECISION_WORDS[decision]}: ${tools.join(", ")}`] : [];
  });
  return parts.length > 0 ? parts.join(" · ") : "Every tool it can reach is allowed";
}
