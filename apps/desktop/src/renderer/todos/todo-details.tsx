import { useEffect, useId, useRef, useState } from "react";
import type * as Y from "yjs";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { Field } from "../components/field";
import { DESCRIPTION_MAX_LENGTH, deleteTodo, restoreTodo, setTodoCompleted, type TodoEdit, updateTodo } from "./todo-actions";
import { DueDateInput, PrioritySelect, TitleInput } from "./todo-fields";
import { formatCompletedAt } from "./todo-format";
import type { TodoItem } from "./todo-lists";
import { TodoSteps } from "./todo-steps";

interface TodoDetailsProps {
  readonly doc: Y.Doc;
  readonly todo: TodoItem;
  readonly onClose: () => void;
  /** After a change that the board offers to undo (completing, deleting). */
  readonly onUndoable: (message: string, undo: () => void) => void;
}

/** How long typing pauses before a draft is written, as the note editor dates its edits. */
export const AUTOSAVE_DELAY_MS = 500;

type EditableField = keyof TodoEdit;

/** A draft value as the document would store it (titles are trimmed). */
const stored = (field: EditableField, value: unknown) => (field === "title" ? (value as string).trim() : value);

/**
 * The selected todo: its fields, completion, steps and deletion. Field edits save themselves
 * {@link AUTOSAVE_DELAY_MS} after typing pauses, and at once when the panel closes (another todo,
 * view or section), so nothing typed is lost. The draft holds only the fields the owner touched;
 * only what was typed since the last save is written, so a field another device changes meanwhile
 * is never overwritten by an older draft: once saved, a field follows the document again (keeping
 * what is typed, such as a title's trailing space, while it still matches). "Discard changes" puts
 * back the touched fields as they were when the panel opened. Render it with `key={uuid}` so a new
 * selection starts afresh.
 */
export function TodoDetails({ doc, todo, onClose, onUndoable }: TodoDetailsProps) {
  const [draft, setDraft] = useState<TodoEdit>({});
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const headingId = useId();
  // The fields as they were when the panel opened, for "Discard changes".
  const [original] = useState<TodoEdit>(() => ({
    title: todo.title,
    description: todo.description,
    dueDate: todo.dueDate,
    priority: todo.priority,
  }));

  const value = <K extends EditableField>(field: K): TodoItem[K] => (field in draft ? (draft[field] as TodoItem[K]) : todo[field]);
  const edit =
    <K extends EditableField>(field: K) =>
    (next: TodoItem[K]) =>
      setDraft((current) => ({ ...current, [field]: next }));
  // The draft values already written: they are not changes any more.
  const written = useRef<TodoEdit>({});
  const changes = Object.fromEntries(
    Object.entries(draft).filter(([field, next]) => !(field in written.current) || written.current[field as EditableField] !== next),
  ) as TodoEdit;
  const pending = Object.keys(changes).length > 0;

  // A saved field that the document no longer matches was changed elsewhere: show that instead.
  useEffect(() => {
    const current: TodoEdit = { title: todo.title, description: todo.description, dueDate: todo.dueDate, priority: todo.priority };
    const stale = (Object.keys(written.current) as EditableField[]).filter(
      (field) => written.current[field] === draft[field] && stored(field, draft[field]) !== current[field],
    );
    if (stale.length === 0) return;
    for (const field of stale) delete written.current[field];
    setDraft((now) => Object.fromEntries(Object.entries(now).filter(([field]) => !stale.includes(field as EditableField))));
  }, [todo.title, todo.description, todo.dueDate, todo.priority, draft]);

  // Writes what differs from the document; an invalid draft (empty title, date out of range) is kept
  // in the fields with its message until it is fixed.
  const save = (edit: TodoEdit) => {
    if (Object.keys(edit).length === 0) return;
    try {
      updateTodo(doc, todo.uuid, edit);
      written.current = { ...written.current, ...edit };
      setError(null);
      setSaved(true);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };
  const latest = useRef({ save, changes });
  latest.current = { save, changes };

  useEffect(() => {
    if (!pending) return;
    setSaved(false);
    const timer = setTimeout(() => latest.current.save(latest.current.changes), AUTOSAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [pending, draft]);
  // Closing the panel (another todo, view or section) saves what is still pending.
  useEffect(() => () => latest.current.save(latest.current.changes), []);

  const touched = Object.keys(draft).length > 0;
  const discard = () => {
    const restore = Object.fromEntries(Object.keys(draft).map((field) => [field, original[field as EditableField]])) as TodoEdit;
    setDraft({});
    written.current = {};
    setError(null);
    setSaved(false);
    save(restore);
    written.current = {};
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
          <button
            type="button"
            className="primary"
            onClick={() => {
              if (setTodoCompleted(doc, todo.uuid, true)) {
                onUndoable(`Completed “${todo.title}”`, () => setTodoCompleted(doc, todo.uuid, false));
              }
            }}
          >
            Mark complete
          </button>
        )}
      </div>

      <form className="todo-edit" aria-label="Edit todo" onSubmit={(event) => event.preventDefault()}>
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
          <output className="todo-save-state">{error ? "" : pending ? "Saving…" : saved ? "Saved" : ""}</output>
          <button type="button" disabled={!touched} onClick={discard}>
            Discard changes
          </button>
        </div>
        {error && <ErrorNotice message={error} />}
      </form>

      <TodoSteps doc={doc} todo={todo} />

      <div className="todo-delete">
        <button
          type="button"
          className="danger"
          onClick={() => {
            const deleted = deleteTodo(doc, todo.uuid);
            onClose();
            if (deleted) onUndoable(`Deleted “${deleted.title}”`, () => restoreTodo(doc, todo.uuid, deleted));
          }}
        >
          Delete todo
        </button>
      </div>
    </section>
  );
}
