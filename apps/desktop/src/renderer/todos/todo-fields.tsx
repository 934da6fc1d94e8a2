import { useId } from "react";
import { PRIORITIES, priorityDescription } from "./todo-format";

/** A labelled field: the create form and the details panel lay theirs out alike. */
function Field({ label, children }: { label: string; children: (id: string) => React.ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
    </div>
  );
}

export function TitleInput({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <Field label="Title">
      {(id) => <input id={id} type="text" value={value} required autoComplete="off" onChange={(event) => onChange(event.target.value)} />}
    </Field>
  );
}

/** `YYYY-MM-DD` or null; the browser's date picker speaks the same format. */
export function DueDateInput({ value, onChange }: { value: string | null; onChange: (value: string | null) => void }) {
  return (
    <Field label="Due date">
      {(id) => <input id={id} type="date" value={value ?? ""} onChange={(event) => onChange(event.target.value || null)} />}
    </Field>
  );
}

export function PrioritySelect({ value, onChange }: { value: number | null; onChange: (value: number | null) => void }) {
  return (
    <Field label="Priority">
      {(id) => (
        <select id={id} value={value ?? ""} onChange={(event) => onChange(event.target.value ? Number(event.target.value) : null)}>
          <option value="">{priorityDescription(null)}</option>
          {PRIORITIES.map((priority) => (
            <option key={priority} value={priority}>
              {priorityDescription(priority)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
