import * as Y from "yjs";
import { putEntry } from "./entries";

/**
 * The `todos:<userId>` document: one `Y.Map` named `todos`, keyed by uuid, each entry a Y.Map:
 *
 *   title: string                 description: string
 *   dueDate: "YYYY-MM-DD" | null  priority: 1 | 2 | 3 | 4 | null   (1 is the most important)
 *   completed: boolean            completedAt: ISO timestamp | null
 *   steps: { title: string, completed: boolean }[]   (replaced as a whole)
 *   createdAt, updatedAt: ISO timestamps
 *
 * Deleting is removing the key. Entries are read defensively: a field of the wrong type reads
 * as its default.
 */
export const TODOS_MAP = "todos";

export interface TodoStep {
  title: string;
  completed: boolean;
}

export interface TodoMeta {
  title: string;
  description: string;
  dueDate: string | null;
  priority: number | null;
  completed: boolean;
  completedAt: string | null;
  steps: TodoStep[];
  createdAt: string;
  updatedAt: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const EPOCH = "1970-01-01T00:00:00.000Z";

function readSteps(value: unknown): TodoStep[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((step): step is { title: unknown; completed?: unknown } => typeof step === "object" && step !== null)
    .map((step) => ({ title: typeof step.title === "string" ? step.title : "", completed: step.completed === true }));
}

export function readTodos(doc: Y.Doc): Map<string, TodoMeta> {
  const todos = new Map<string, TodoMeta>();
  doc.getMap<unknown>(TODOS_MAP).forEach((entry, uuid) => {
    if (!(entry instanceof Y.Map)) return;
    const get = (key: string) => (entry as Y.Map<unknown>).get(key);
    const createdAt = typeof get("createdAt") === "string" ? (get("createdAt") as string) : EPOCH;
    const dueDate = get("dueDate");
    const priority = get("priority");
    todos.set(uuid, {
      title: typeof get("title") === "string" ? (get("title") as string) : "",
      description: typeof get("description") === "string" ? (get("description") as string) : "",
      dueDate: typeof dueDate === "string" && DATE.test(dueDate) ? dueDate : null,
      priority: typeof priority === "number" && Number.isInteger(priority) && priority >= 1 && priority <= 4 ? priority : null,
      completed: get("completed") === true,
      completedAt: typeof get("completedAt") === "string" ? (get("completedAt") as string) : null,
      steps: readSteps(get("steps")),
      createdAt,
      updatedAt: typeof get("updatedAt") === "string" ? (get("updatedAt") as string) : createdAt,
    });
  });
  return todos;
}

/** Creates or updates a todo with the given fields (call inside a transaction). */
export function putTodo(doc: Y.Doc, uuid: string, fields: Partial<TodoMeta>): void {
  putEntry(doc, TODOS_MAP, uuid, fields);
}

export function removeTodo(doc: Y.Doc, uuid: string): void {
  doc.getMap(TODOS_MAP).delete(uuid);
}
