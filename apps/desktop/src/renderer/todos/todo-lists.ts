import type { TodoMeta } from "@tandem/core/documents";

/** A todo as the views show it: the document's fields and the key it lives under. */
export interface TodoItem extends TodoMeta {
  readonly uuid: string;
}

export type TodoViewId = "today" | "overdue" | "upcoming" | "all" | "completed";

export interface TodoViewDefinition {
  readonly id: TodoViewId;
  readonly label: string;
  readonly emptyState: string;
}

/**
 * The views, in switcher order. Their rules match the server's `date` filter of `GET /os/todos`
 * (today and upcoming include completed todos, overdue does not), so the app and the API agree.
 */
export const TODO_VIEWS: readonly [TodoViewDefinition, ...TodoViewDefinition[]] = [
  { id: "today", label: "Today", emptyState: "Nothing is due today." },
  { id: "overdue", label: "Overdue", emptyState: "Nothing is overdue." },
  { id: "upcoming", label: "Upcoming", emptyState: "Nothing is planned after today." },
  { id: "all", label: "All", emptyState: "No open todos." },
  { id: "completed", label: "Completed", emptyState: "No completed todos yet." },
];

/** Whether a todo belongs to a view; `today` is `YYYY-MM-DD` in the user's time zone (dates compare as strings). */
export function isInView(todo: TodoMeta, view: TodoViewId, today: string): boolean {
  switch (view) {
    case "today":
      return todo.dueDate === today;
    case "overdue":
      return todo.dueDate !== null && todo.dueDate < today && !todo.completed;
    case "upcoming":
      return todo.dueDate !== null && todo.dueDate > today;
    case "all":
      return !todo.completed;
    case "completed":
      return todo.completed;
  }
}

/** Empty values sort after any value, as in the server's lists. */
function compareNullable<T extends string | number>(a: T | null, b: T | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

/**
 * Open before completed (views that mix them keep what is left to do on top), then priority
 * (1 first), then due date (earliest first), then creation; the uuid makes the order total so rows
 * never swap places between renders.
 */
export function compareTodos(a: TodoItem, b: TodoItem): number {
  return (
    Number(a.completed) - Number(b.completed) ||
    compareNullable(a.priority, b.priority) ||
    compareNullable(a.dueDate, b.dueDate) ||
    compareNullable(a.createdAt, b.createdAt) ||
    compareNullable(a.uuid, b.uuid)
  );
}

export function todosInView(todos: Iterable<TodoItem>, view: TodoViewId, today: string): TodoItem[] {
  return [...todos].filter((todo) => isInView(todo, view, today)).sort(compareTodos);
}

/** How many todos each view lists, for the switcher. */
export function countViews(todos: Iterable<TodoItem>, today: string): Record<TodoViewId, number> {
  const counts: Record<TodoViewId, number> = { today: 0, overdue: 0, upcoming: 0, all: 0, completed: 0 };
  for (const todo of todos) {
    for (const { id } of TODO_VIEWS) if (isInView(todo, id, today)) counts[id] += 1;
  }
  return counts;
}

/**
 * The list with some rows held where they were: a todo just completed (or reopened) by its checkbox
 * keeps its place until the pointer leaves the list, so the next row does not slide under the pointer
 * and a second click lands on the same row. `held` maps a uuid to the index it had.
 */
export function holdPositions(listed: readonly TodoItem[], todos: readonly TodoItem[], held: ReadonlyMap<string, number>): TodoItem[] {
  if (held.size === 0) return [...listed];
  const current = new Map(todos.map((todo) => [todo.uuid, todo]));
  const rows = listed.filter((todo) => !held.has(todo.uuid));
  for (const [uuid, index] of [...held].sort((a, b) => a[1] - b[1])) {
    const todo = current.get(uuid);
    if (todo) rows.splice(Math.min(index, rows.length), 0, todo);
  }
  return rows;
}
