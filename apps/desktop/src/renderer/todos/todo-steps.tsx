import { type FormEvent, useState } from "react";
import type * as Y from "yjs";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { addStep, removeStep, setStepCompleted } from "./todo-actions";
import type { TodoItem } from "./todo-lists";

/** A todo's checklist: each change is written at once (steps are small and rarely edited together). */
export function TodoSteps({ doc, todo }: { doc: Y.Doc; todo: TodoItem }) {
  const [title, setTitle] = useState("");
  const [error, setError] = useState<string | null>(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    try {
      addStep(doc, todo.uuid, title);
      setTitle("");
      setError(null);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  };

  return (
    <section className="todo-steps" aria-labelledby={`steps-${todo.uuid}`}>
      <h4 id={`steps-${todo.uuid}`}>Steps</h4>
      {todo.steps.length > 0 && (
        <ul aria-label="Steps">
          {todo.steps.map((step, index) => (
            // Steps have no ids: a position (with its title, see StepRef) is what identifies one.
            <li key={index} data-completed={step.completed}>
              <label>
                <input
                  type="checkbox"
                  checked={step.completed}
                  onChange={(event) => setStepCompleted(doc, todo.uuid, { index, title: step.title }, event.target.checked)}
                />
                <span>{step.title}</span>
              </label>
              <button
                type="button"
                className="icon-button"
                aria-label={`Remove step ${step.title}`}
                title="Remove step"
                onClick={() => removeStep(doc, todo.uuid, { index, title: step.title })}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="todo-step-add" aria-label="Add a step" onSubmit={submit}>
        <input
          type="text"
          aria-label="New step"
          placeholder="Add a step"
          value={title}
          autoComplete="off"
          onChange={(event) => setTitle(event.target.value)}
        />
        <button type="submit">Add step</button>
      </form>
      {error && <ErrorNotice message={error} />}
    </section>
  );
}
