import { MAX_FOLDER_NAME_LENGTH } from "@tandem/core/documents";
import { type FormEvent, type KeyboardEvent, useState } from "react";

interface NameInputProps {
  /** The input's accessible name, e.g. "Folder name". */
  readonly label: string;
  readonly placeholder: string;
  readonly initial?: string;
  /** Why a name cannot be used, or null when it can; checked on submit. */
  readonly validate: (name: string) => string | null;
  readonly onSubmit: (name: string) => void;
  readonly onCancel: () => void;
}

/**
 * A name typed in place. Enter, or leaving the field, keeps it; Escape or the Cancel button drops
 * it. Nothing typed is lost by clicking elsewhere: an unusable name stays in the field with the
 * reason, and an untouched or blank one simply closes the field.
 */
export function NameInput({ label, placeholder, initial = "", validate, onSubmit, onCancel }: NameInputProps) {
  const [name, setName] = useState(initial);
  const [problem, setProblem] = useState<string | null>(null);
  const keep = () => {
    if (name.trim() === "" || name.trim() === initial.trim()) return onCancel();
    const issue = validate(name);
    if (issue) setProblem(issue);
    else onSubmit(name.trim());
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    keep();
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      // Handled here: Escape must not also close the panel around the field.
      event.stopPropagation();
      onCancel();
    }
  };
  return (
    <form
      className="name-input"
      onSubmit={submit}
      onBlur={(event) => {
        // Moving between the form's own parts (the field, Cancel) is not leaving it.
        if (!event.currentTarget.contains(event.relatedTarget)) keep();
      }}
    >
      <div className="name-input-row">
        <input
          aria-label={label}
          aria-invalid={problem !== null}
          placeholder={placeholder}
          dir="auto"
          maxLength={MAX_FOLDER_NAME_LENGTH}
          // biome-ignore lint/a11y/noAutofocus: the field appears because the owner asked to type a name.
          autoFocus
          value={name}
          onChange={(event) => {
            setName(event.target.value);
            setProblem(null);
          }}
          onKeyDown={onKeyDown}
        />
        <button
          type="button"
          className="icon-button"
          aria-label="Cancel"
          title="Cancel (Escape)"
          // Cancel acts on press, before the field's blur could keep the name.
          onMouseDown={(event) => event.preventDefault()}
          onClick={onCancel}
        >
          ×
        </button>
      </div>
      {problem && (
        <span className="field-problem" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}
