import { readTodos } from "@tandem/core/documents";
import { useEffect, useId, useMemo, useState } from "react";
import type * as Y from "yjs";
import { setTodoCompleted } from "./todo-actions";
import { TodoCreateForm } from "./todo-create-form";
import { TodoDetails } from "./todo-details";
import { countViews, holdPositions, isInView, TODO_VIEWS, type TodoItem, type TodoViewId, todosInView } from "./todo-lists";
import { TodoRow } from "./todo-row";
import { UndoToast, useUndoToast } from "./todo-undo";
import { TodoViewSwitcher } from "./todo-view-switcher";
import { useToday } from "./use-today";
import { useTodos } from "./use-todos";
import "./todos.css";

/** The todos screen over an open `todos:<userId>` document: view tabs, quick entry, the list, the selected todo. */
export function TodoBoard({ doc }: { doc: Y.Doc }) {
  const todos = useTodos(doc);
  const today = useToday();
  const [view, setView] = useState<TodoViewId>("today");
  const [selectedUuid, setSelectedUuid] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const panelId = useId();
  const [held, setHeld] = useState<ReadonlyMap<string, number>>(new Map());
  const undo = useUndoToast();

  const counts = useMemo(() => countViews(todos, today), [todos, today]);
  const listed = useMemo(() => holdPositions(todosInView(todos, view, today), todos, held), [todos, view, today, held]);
  const release = () => setHeld((current) => (current.size === 0 ? current : new Map()));
  // Held rows also settle a few seconds after the last click, wherever the pointer is.
  useEffect(() => {
    if (held.size === 0) return;
    const timer = setTimeout(() => setHeld(new Map()), 4000);
    return () => clearTimeout(timer);
  }, [held]);

  const toggle = (todo: TodoItem, completed: boolean) => {
    const index = listed.findIndex((row) => row.uuid === todo.uuid);
    if (index >= 0) setHeld((current) => new Map(current).set(todo.uuid, index));
    if (!setTodoCompleted(doc, todo.uuid, completed)) return;
    const title = todo.title || "Untitled todo";
    if (completed) undo.offer(`Completed “${title}”`, () => setTodoCompleted(doc, todo.uuid, false));
    else undo.offer(`Reopened “${title}”`, () => setTodoCompleted(doc, todo.uuid, true));
  };
  // The selection outlives the view (a todo completed in All stays open to be reopened) but not the todo.
  const selected = todos.find((todo) => todo.uuid === selectedUuid) ?? null;
  const definition = TODO_VIEWS.find((candidate) => candidate.id === view) ?? TODO_VIEWS[0];

  const changeView = (next: TodoViewId) => {
    setView(next);
    setNotice(null);
    release();
  };
  // A todo created outside the open view (due tomorrow, added in Today) would seem to vanish: say where it went.
  const announceCreated = (uuid: string) => {
    const created = readTodos(doc).get(uuid);
    const home =
      created && !isInView(created, view, today) ? TODO_VIEWS.find((candidate) => isInView(created, candidate.id, today)) : undefined;
    setNotice(created && home ? `“${created.title}” is in ${home.label}.` : null);
  };

  return (
    <div className={selected ? "todos todos-with-details" : "todos"}>
      <TodoViewSwitcher current={view} counts={counts} onChange={changeView} panelId={panelId} />
      <div className="todos-list-pane" id={panelId} role="tabpanel" aria-labelledby={`todo-tab-${view}`}>
        <TodoCreateForm doc={doc} defaultDueDate={view === "today" ? today : null} onCreated={announceCreated} />
        {/* Always rendered: a live region must exist before its text changes to be announced. */}
        <p className="todo-notice" role="status">
          {notice}
        </p>
        {listed.length === 0 ? (
          <p className="empty-state">{definition.emptyState}</p>
        ) : (
          <ul className="todo-list" aria-label={`${definition.label} todos`} onMouseLeave={release}>
            {listed.map((todo) => (
              <TodoRow
                key={todo.uuid}
                todo={todo}
                today={today}
                selected={todo.uuid === selectedUuid}
                onSelect={(uuid) => setSelectedUuid((current) => (current === uuid ? null : uuid))}
                onToggle={toggle}
              />
            ))}
          </ul>
        )}
      </div>
      {selected && (
        <TodoDetails key={selected.uuid} doc={doc} todo={selected} onClose={() => setSelectedUuid(null)} onUndoable={undo.offer} />
      )}
      <UndoToast toast={undo.toast} onDismiss={undo.dismiss} />
    </div>
  );
}
