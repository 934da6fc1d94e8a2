import { findDueDate } from "./local-dates";

/** "remind me to …", "add a todo: …": a request to create a todo, in a chat or on a line of a checklist. */
export const CREATE_TODO = /\b(remind me(?: to)?|(?:add|create|make|new)\s+(?:a\s+|an\s+|new\s+)?(?:todo|to-do|task))\b[:\s]*/i;

export interface TodoRequest {
  readonly title: string;
  readonly dueDate?: string;
}

/** The todo a text asks for (its title, and a due date it names), or null when it asks for none. */
export function parseTodoRequest(text: string, today: string): TodoRequest | null {
  const match = CREATE_TODO.exec(text);
  if (!match) return null;
  const rest = text.slice(match.index + match[0].length);
  const due = findDueDate(rest, today);
  const title = cleanTitle(due ? rest.replace(due.phrase, " ") : rest) || "New todo";
  return due ? { title, dueDate: due.date } : { title };
}

/** A title from free text: no leading "to"/"that", no trailing punctuation, first letter capitalised. */
export function cleanTitle(text: string): string {
  const title = text
    .replace(/^\s*(?:to|that|:|-)\s+/i, "")
    .replace(/\s+/g, " ")
    .replace(/[\s.!?,;:]+$/g, "")
    .trim()
    .slice(0, 200);
  return title ? title[0]?.toUpperCase() + title.slice(1) : "";
}
