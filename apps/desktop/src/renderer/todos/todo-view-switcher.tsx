import { type KeyboardEvent, useRef } from "react";
import { TODO_VIEWS, type TodoViewId } from "./todo-lists";

interface TodoViewSwitcherProps {
  readonly current: TodoViewId;
  readonly counts: Record<TodoViewId, number>;
  readonly onChange: (view: TodoViewId) => void;
  /** The id of the panel the tabs control. */
  readonly panelId: string;
}

/** The views as tabs with their counts; arrow keys move between them, as the ARIA tabs pattern expects. */
export function TodoViewSwitcher({ current, counts, onChange, panelId }: TodoViewSwitcherProps) {
  const tabs = useRef(new Map<TodoViewId, HTMLButtonElement>());
  const onKeyDown = (event: KeyboardEvent) => {
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    event.preventDefault();
    const index = TODO_VIEWS.findIndex((view) => view.id === current);
    const next = TODO_VIEWS[(index + step + TODO_VIEWS.length) % TODO_VIEWS.length];
    if (!next) return;
    onChange(next.id);
    tabs.current.get(next.id)?.focus();
  };
  return (
    <div className="todo-views" role="tablist" aria-label="Todo views" onKeyDown={onKeyDown}>
      {TODO_VIEWS.map((view) => (
        <button
          key={view.id}
          ref={(element) => {
            if (element) tabs.current.set(view.id, element);
            else tabs.current.delete(view.id);
          }}
          type="button"
          role="tab"
          id={`todo-tab-${view.id}`}
          aria-selected={view.id === current}
          aria-controls={panelId}
          tabIndex={view.id === current ? 0 : -1}
          onClick={() => onChange(view.id)}
        >
          {view.label} <span className="todo-count">{counts[view.id]}</span>
        </button>
      ))}
    </div>
  );
}
