import { formatDueDate, priorityDescription, priorityLabel } from "./todo-format";
import type { TodoItem } from "./todo-lists";

interface TodoRowProps {
  readonly todo: TodoItem;
  readonly today: string;
  readonly selected: boolean;
  readonly onSelect: (uuid: string) => void;
  readonly onToggle: (todo: TodoItem, completed: boolean) => void;
}

/** One line of a list: a completion checkbox, the title (opens the details), and what is due when. */
export function TodoRow({ todo, today, selected, onSelect, onToggle }: TodoRowProps) {
  const title = todo.title || "Untitled todo";
  const stepsDone = todo.steps.filter((step) => step.completed).length;
  const overdue = !todo.completed && todo.dueDate !== null && todo.dueDate < today;
  return (
    <li
      className="todo-row"
      data-priority={todo.priority ?? "none"}
      data-completed={todo.completed}
      aria-current={selected ? "true" : undefined}
    >
      <input
        type="checkbox"
        className="todo-check"
        checked={todo.completed}
        aria-label={`Complete ${title}`}
        onChange={(event) => {
          // One action per click: the second click of a double-click is not a second toggle.
          if ((event.nativeEvent as MouseEvent).detail > 1) return;
          onToggle(todo, event.target.checked);
        }}
      />
      <div className="todo-row-body">
        <button type="button" className="todo-title" aria-expanded={selected} onClick={() => onSelect(todo.uuid)}>
          {title}
        </button>
        {todo.description && <p className="todo-row-description">{todo.description}</p>}
        <div className="todo-meta">
          {todo.dueDate && (
            <span className={overdue ? "todo-due todo-overdue" : "todo-due"} title={todo.dueDate}>
              {formatDueDate(todo.dueDate, today)}
            </span>
          )}
          {todo.priority !== null && (
            <span className="todo-priority" title={priorityDescription(todo.priority)}>
              {priorityLabel(todo.priority)}
            </span>
          )}
          {todo.steps.length > 0 && (
            <span className="todo-steps-count" title="Steps done">
              {stepsDone}/{todo.steps.length} steps
            </span>
          )}
        </div>
      </div>
    </li>
  );
}
