/** What a tool does, in words: while it runs ("Searching notes…"), and once done ("Searched notes"). */
const TOOL_WORDS: Record<string, readonly [running: string, done: string]> = {
  search_notes: ["Searching notes", "Searched notes"],
  grep_notes: ["Searching notes for exact words", "Searched notes for exact words"],
  get_note_content: ["Reading a note", "Read a note"],
  list_notes: ["Listing notes", "Listed notes"],
  list_folders: ["Listing folders", "Listed folders"],
  create_note: ["Creating a note", "Created a note"],
  edit_note: ["Editing a note", "Edited a note"],
  pin_note: ["Pinning a note", "Pinned a note"],
  save_snapshot: ["Saving a snapshot", "Saved a snapshot"],
  list_snapshots: ["Listing snapshots", "Listed snapshots"],
  restore_snapshot: ["Restoring a snapshot", "Restored a snapshot"],
  list_todos: ["Looking at your todos", "Looked at your todos"],
  create_todo: ["Creating a todo", "Created a todo"],
  complete_todo: ["Completing a todo", "Completed a todo"],
  memory_search: ["Searching memory", "Searched memory"],
  memory_write: ["Saving to memory", "Saved to memory"],
  list_network: ["Looking at your contacts", "Looked at your contacts"],
  // Not a tool: a heartbeat run records its message as its last action.
  send_message: ["Sending the message", "Sent the message"],
};

/** `stopped`: the reply ended (stopped, or cut off) before the tool answered. */
export type ToolState = "running" | "done" | "failed" | "stopped";

/** A tool call's chip text; a tool this app does not know is named by its id, made readable. */
export function toolLabel(toolName: string, state: ToolState): string {
  const words = TOOL_WORDS[toolName];
  const name = toolName.replaceAll("_", " ");
  if (state === "running") return `${words?.[0] ?? `Using ${name}`}…`;
  if (state === "done") return words?.[1] ?? `Used ${name}`;
  return `${words?.[0] ?? `Using ${name}`} ${state === "failed" ? "failed" : "stopped"}`;
}
