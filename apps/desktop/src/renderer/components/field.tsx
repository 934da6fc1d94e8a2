import { type InputHTMLAttributes, type ReactNode, useId } from "react";

/** A labelled field: the label above its control, tied to it by an id the control is given. */
export function Field({ label, children }: { label: string; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children(id)}
    </div>
  );
}

/** A labelled `<input>` with the given attributes. */
export function InputField({ label, ...input }: { label: string } & Omit<InputHTMLAttributes<HTMLInputElement>, "id">) {
  return <Field label={label}>{(id) => <input id={id} {...input} />}</Field>;
}
