import { type FormEvent, useId, useState } from "react";
import type * as Y from "yjs";
import { ConfirmButton } from "../components/confirm-button";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { Field } from "../components/field";
import { DESCRIPTION_MAX_LENGTH, deleteTodo, setTodoCompleted, type TodoEdit, updateTodo } from "./todo-actions";
import { DueDateInput, PrioritySelect, TitleInput } from "./todo-fields";
import { formatCompletedAt } from "./todo-format";
import type { TodoItem } from "./todo-lists";
import { TodoSteps } from "./todo-steps";

interface TodoDetailsProps {
  readonly doc: Y.Doc;
  readonly todo: TodoItem;
  readonly onClose: () => void;
}

type EditableField = keyof TodoEdit;

/**
 * The selected todo: its fields, completion, steps and deletion. Field edits are a draft saved
 * together; the draft holds only the fields the owner touched, so the others keep following the
 * document while they type (another device may be editing them). Render it with `key={uuid}` so a
 * new selection starts a fresh draft.
 */
export function TodoDetails({ doc, todo, onClose }: TodoDetailsProps) {
  const [draft, setDraft] = useState<TodoEdit>({});
  const [error, setError] = useState<string | null>(null);
  const headingId = useId();

  const value = <K extends EditableField>(field: K): TodoItem[K] => (field in draft ? (draft[field] as TodoItem[K]) : todo[field]);
  const edit =
    <K extends EditableField>(field: K) =>
    (next: TodoItem[K]) =>
      setDraft((current) => ({ ...current, [field]: next }));
  const changes = Object.fromEntries(Object.entries(draft).filter(([field, next]) => todo[field as EditableField] !== next)) as TodoEdit;
  const dirty = Object.keys(changes).length > 0;

  const save = (event: FormEvent) => {
    event.preventDefault();
    try {
      updateTodo(doc, todo.uuid, changes);
      setDraft({});
      setError(null);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };

  const revert = () => {
    setDraft({});
    setError(null);
  };

  return (
    <section className="todo-details" aria-labelledby={headingId}>
      <header className="todo-details-header">
        <h3 id={headingId}>{todo.title || "Untitled todo"}</h3>
        <button type="button" className="icon-button" aria-label="Close details" title="Close" onClick={onClose}>
          ×
        </button>
      </header>

      <div className="todo-completion">
        {todo.completed ? (
          <>
            <span className="todo-completed-at">Completed {todo.completedAt ? formatCompletedAt(todo.completedAt) : ""}</span>
            <button type="button" onClick={() => setTodoCompleted(doc, todo.uuid, false)}>
              Reopen
            </button>
          </>
        ) : (
          <button type="button" className="primary" onClick={() => setTodoCompleted(doc, todo.uuid, true)}>
            Mark complete
          </button>
        )}
      </div>

      <form className="todo-edit" aria-label="Edit todo" onSubmit={save}>
        <TitleInput value={value("title")} onChange={edit("title")} />
        <Field label="Description">
          {(id) => (
            <textarea
              id={id}
              rows={4}
              maxLength={DESCRIPTION_MAX_LENGTH}
              value={value("description")}
              onChange={(event) => edit("description")(event.target.value)}
            />
          )}
        </Field>
        <div className="todo-edit-row">
          <DueDateInput value={value("dueDate")} onChange={edit("dueDate")} />
          <PrioritySelect value={value("priority")} onChange={edit("priority")} />
        </div>
        <div className="todo-actions">
          <button type="submit" className="primary" disabled={!dirty}>
            Save
          </button>
          <button type="button" disabled={!dirty} onClick={revert}>
            Revert
          </button>
        </div>
        {error && <ErrorNotice message={error} />}
      </form>

      <TodoSteps doc={doc} todo={todo} />

      <div className="todo-delete">
        <ConfirmButton
          label="Delete todo"
          question={`Delete “${todo.title || "Untitled todo"}”? This cannot be undone.`}
          onConfirm={() => {
            deleteTodo(doc, todo.uuid);
            onClose();
          }}
        />
      </div>
    </section>
  );
}
