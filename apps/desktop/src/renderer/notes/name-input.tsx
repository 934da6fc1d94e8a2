import { type FormEvent, type KeyboardEvent, useState } from "react";

interface NameInputProps {
  /** The input's accessible name, e.g. "Folder name". */
  readonly label: string;
  readonly initial?: string;
  /** Why a name cannot be used, or null when it can; checked on submit. */
  readonly validate: (name: string) => string | null;
  readonly onSubmit: (name: string) => void;
  readonly onCancel: () => void;
}

/** A name typed in place: Enter keeps it, Escape (or leaving the field) drops it. */
export function NameInput({ label, initial = "", validate, onSubmit, onCancel }: NameInputProps) {
  const [name, setName] = useState(initial);
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const issue = validate(name);
    if (issue) setProblem(issue);
    else onSubmit(name.trim());
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape") onCancel();
  };
  return (
    <form className="name-input" onSubmit={submit}>
      <input
        aria-label={label}
        aria-invalid={problem !== null}
        // biome-ignore lint/a11y/noAutofocus: the field appears because the owner asked to type a name.
        autoFocus
        value={name}
        onChange={(event) => {
          setName(event.target.value);
          setProblem(null);
        }}
        onKeyDown={onKeyDown}
        onBlur={(event) => {
          // Leaving for the form's own parts (none today) keeps it; leaving elsewhere cancels.
          if (!event.currentTarget.form?.contains(event.relatedTarget)) onCancel();
        }}
      />
      {problem && (
        <span className="field-problem" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}
