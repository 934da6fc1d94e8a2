import { Field, InputField } from "../components/field";
import { PRIORITIES, priorityDescription } from "./todo-format";

export function TitleInput({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <InputField label="Title" type="text" value={value} required autoComplete="off" onChange={(event) => onChange(event.target.value)} />
  );
}

/** `YYYY-MM-DD` or null; the browser's date picker speaks the same format. */
export function DueDateInput({ value, onChange }: { value: string | null; onChange: (value: string | null) => void }) {
  return <InputField label="Due date" type="date" value={value ?? ""} onChange={(event) => onChange(event.target.value || null)} />;
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
