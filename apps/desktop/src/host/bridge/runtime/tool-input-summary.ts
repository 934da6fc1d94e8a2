import { MAX_TOOL_INPUT_SUMMARY_LENGTH } from "@tandem/core";

/** The input fields that say what a tool call does, by tool, most telling first. */
const TELLING_FIELDS = ["command", "file_path", "notebook_path", "path", "url", "query", "pattern", "prompt", "description"];

/**
 * What the owner reads before allowing a tool call: the telling fields of its input (the command,
 * the file, the URL), else the input as JSON; at most 500 characters, as the server requires.
 */
export function summarizeToolInput(input: unknown): string {
  let summary: string;
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const record = input as Record<string, unknown>;
    const parts = TELLING_FIELDS.filter((field) => typeof record[field] === "string" && record[field] !== "").map(
      (field) => `${field}: ${record[field] as string}`,
    );
    summary = parts.length > 0 ? parts.join("\n") : JSON.stringify(record);
  } else {
    summary = input === undefined ? "" : (JSON.stringify(input) ?? "");
  }
  return truncate(summary, MAX_TOOL_INPUT_SUMMARY_LENGTH);
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
