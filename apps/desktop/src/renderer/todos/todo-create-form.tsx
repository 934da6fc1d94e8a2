import { type FormEvent, useState } from "react";
import type * as Y from "yjs";
import { errorMessage } from "../components/error-message";
import { ErrorNotice } from "../components/error-notice";
import { createTodo } from "./todo-actions";
import { DueDateInput, PrioritySelect, TitleInput } from "./todo-fields";

/**
 * Quick entry above the list. The due date starts at the view's own (today in Today) so a new
 * todo lands where the owner is looking; once they pick one, theirs is kept.
 */
export function TodoCreateForm({
  doc,
  defaultDueDate,
  onCreated,
}: {
  doc: Y.Doc;
  defaultDueDate: string | null;
  onCreated: (uuid: string) => void;
}) {
  const [title, setTitle] = useState("");
  const [chosenDueDate, setChosenDueDate] = useState<string | null | undefined>(undefined);
  const [priority, setPriority] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const dueDate = chosenDueDate === undefined ? defaultDueDate : chosenDueDate;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let uuid: string;
    try {
      uuid = createTodo(doc, { title, dueDate, priority });
    } catch (failure) {
      setError(errorMessage(failure));
      return;
    }
    setTitle("");
    setChosenDueDate(undefined);
    setPriority(null);
    setError(null);
    onCreated(uuid);
  };

  return (
    <form className="todo-create" aria-label="New todo" onSubmit={submit}>
      <TitleInput value={title} onChange={setTitle} />
      <DueDateInput value={dueDate} onChange={setChosenDueDate} />
      <PrioritySelect value={priority} onChange={setPriority} />
      <button type="submit" className="primary">
        Add todo
      </button>
      {error && <ErrorNotice message={error} />}
    </form>
  );
}
